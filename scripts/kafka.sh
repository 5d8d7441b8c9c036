#!/usr/bin/env bash
# scripts/kafka.sh — a real single-node Apache Kafka broker (KRaft: broker and controller in one JVM)
# for satang's tests, CI and local runs, without Docker. The broker's jars come from Maven Central
# through Maven (cached); it runs on the machine's Java 17+.
#
#   scripts/kafka.sh start     fetch the jars if needed, format storage once, start in the background,
#                              wait until the broker answers; prints the bootstrap address (a broker
#                              already running is left as it is: it says when its configuration is not
#                              what it would start it with now, which a stop and start applies)
#   scripts/kafka.sh stop      stop the broker this script started (only its own PID)
#   scripts/kafka.sh status    exit 0 when our broker is running and answering, 1 otherwise
#   scripts/kafka.sh fetch     only download the jars
#   scripts/kafka.sh reset     stop, then delete the broker's data (the next start formats anew)
#   scripts/kafka.sh env       print the test variables (for `eval`): SATANG_TEST_KAFKA_BROKERS=<host:port>
#                              (PLAINTEXT), and the secure listener's SATANG_TEST_KAFKA_SECURE_BROKERS,
#                              _CA_FILE, _USERNAME, _PASSWORD_FILE and _MECHANISMS (the SASL mechanisms it takes)
#
# Two client listeners: PLAINTEXT on the port, and SASL_SSL on the port + 2 (TLS with a certificate
# signed by a CA made for this broker; SASL SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN, one user with one
# password for all three). The CA, the broker's keystore and the password are made at the first start
# (openssl and the JDK's keytool) in <run dir>/secure/; the SCRAM user is created when the storage is
# formatted (a storage formatted before SCRAM-SHA-256 was added has only SCRAM-SHA-512: `env` says
# which, in SATANG_TEST_KAFKA_SECURE_MECHANISMS; `reset` gives both), the PLAIN one is in
# server.properties (mode 0600).
#
# Settings (environment, all optional):
#   SATANG_KAFKA_VERSION        Apache Kafka version, default 4.1.2 (kafka_2.13 on Maven Central)
#   SATANG_KAFKA_PORT           client port, default 19092 (the controller uses the port + 1, SASL_SSL the port + 2)
#   SATANG_KAFKA_SCRAM_USER     the SASL user of the secure listener (SCRAM and PLAIN), default satang
#   SATANG_KAFKA_HOST           default 127.0.0.1
#   SATANG_KAFKA_RUN_DIR        pid, log, config and data, default ${TMPDIR:-/tmp}/satang-kafka-<port>
#   SATANG_KAFKA_CACHE_DIR      jar cache, default ${XDG_CACHE_HOME:-$HOME/.cache}/satang/kafka
#   SATANG_KAFKA_HEAP           JVM heap options, default "-Xms128m -Xmx512m"
#   SATANG_KAFKA_START_TIMEOUT  seconds to wait for the broker, default 120
set -euo pipefail

version="${SATANG_KAFKA_VERSION:-4.1.2}"
scala="2.13"
slf4j_binding="org.apache.logging.log4j:log4j-slf4j-impl:2.24.3" # Kafka's pom names no logging backend
dependency_plugin="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
host="${SATANG_KAFKA_HOST:-127.0.0.1}"
port="${SATANG_KAFKA_PORT:-19092}"
controller_port=$((port + 1))
secure_port=$((port + 2))
scram_user="${SATANG_KAFKA_SCRAM_USER:-satang}"
run_dir="${SATANG_KAFKA_RUN_DIR:-${TMPDIR:-/tmp}/satang-kafka-$port}"
cache_dir="${SATANG_KAFKA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/satang/kafka}"
heap="${SATANG_KAFKA_HEAP:--Xms128m -Xmx512m}"
start_timeout="${SATANG_KAFKA_START_TIMEOUT:-120}"

libs="$cache_dir/$version/libs"
data_dir="$run_dir/data"
pid_file="$run_dir/broker.pid"
log_file="$run_dir/broker.log"
props="$run_dir/server.properties"
log_config="$run_dir/log4j2.properties"
secure_dir="$run_dir/secure"
ca_file="$secure_dir/ca.pem"
password_file="$secure_dir/scram-password"
keystore="$secure_dir/broker.p12"
keystore_password_file="$secure_dir/keystore-password"

say() { printf '[kafka.sh] %s\n' "$*" >&2; }
fail() {
  say "error: $*"
  exit 1
}

answers() { (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null; }

# The PID of the broker this script started, when it is alive and still that broker.
our_pid() {
  [ -f "$pid_file" ] || return 1
  local pid
  pid=$(cat "$pid_file")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "kafka\.Kafka $props" || return 1
  echo "$pid"
}

# Whether process $1 exists and has not ended (a zombie not yet reaped has ended).
running() {
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

need_java() {
  command -v java >/dev/null || fail "java is not installed (Kafka $version needs Java 17 or newer)"
  local major
  major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | cut -d. -f1)
  [ "${major:-0}" -ge 17 ] || fail "java $major is too old: Kafka $version needs Java 17 or newer (set JAVA_HOME or PATH)"
}

fetch() {
  if [ -f "$libs/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || fail "mvn is not installed: it fetches the broker's jars from Maven Central"
  say "fetching Apache Kafka $version jars from Maven Central into $libs"
  local work
  work=$(mktemp -d)
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>satang.local</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$scala</artifactId><version>$version</version></dependency>
    <dependency><groupId>${slf4j_binding%%:*}</groupId><artifactId>$(echo "$slf4j_binding" | cut -d: -f2)</artifactId><version>${slf4j_binding##*:}</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "$libs" && mkdir -p "$libs"
  if ! (cd "$work" && mvn -B -q -ntp -Dstyle.color=never "$dependency_plugin:copy-dependencies" -DoutputDirectory="$libs" -DincludeScope=runtime); then
    rm -rf "$work" "$libs"
    fail "Maven could not fetch org.apache.kafka:kafka_$scala:$version (see its output above)"
  fi
  rm -rf "$work"
  ls "$libs"/kafka_"$scala"-"$version".jar >/dev/null 2>&1 || fail "the fetch finished without kafka_$scala-$version.jar"
  touch "$libs/.complete"
}

# The broker's server.properties as this script writes it now, on stdout (it holds passwords: never to a terminal or a log).
broker_properties() {
  cat <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$host:$controller_port
listeners=PLAINTEXT://$host:$port,CONTROLLER://$host:$controller_port,SASL_SSL://$host:$secure_port
advertised.listeners=PLAINTEXT://$host:$port,SASL_SSL://$host:$secure_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$scram_user="$(cat "$password_file")";
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$keystore
listener.name.sasl_ssl.ssl.keystore.password=$(cat "$keystore_password_file")
listener.name.sasl_ssl.ssl.key.password=$(cat "$keystore_password_file")
listener.name.sasl_ssl.ssl.client.auth=none
log.dirs=$data_dir
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
auto.create.topics.enable=false
PROPS
}

write_config() {
  mkdir -p "$run_dir"
  # It holds the keystore's password and the SASL password (PLAIN reads it from here): readable by us only.
  rm -f "$props"
  (umask 077 && : >"$props")
  broker_properties >>"$props"
  cat >"$log_config" <<LOG
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $log_file
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = WARN
LOG
}

# The secure listener's material, made once per run folder: a CA, the broker's key and certificate
# (signed by the CA, for 127.0.0.1, localhost and $host) in a PKCS#12 keystore, the SCRAM password.
make_secure_material() {
  [ -f "$keystore" ] && [ -f "$ca_file" ] && [ -f "$password_file" ] && [ -f "$keystore_password_file" ] && return 0
  command -v openssl >/dev/null || fail "openssl is not installed: it makes the secure listener's CA and certificate"
  say "making a CA, the broker's certificate and the SCRAM password in $secure_dir"
  rm -rf "$secure_dir"
  mkdir -p "$secure_dir"
  chmod 700 "$secure_dir"
  local work="$secure_dir/work"
  mkdir -p "$work"
  (
    umask 077
    openssl rand -hex 24 >"$password_file"
    openssl rand -hex 24 >"$keystore_password_file"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=satang test Kafka CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$work/ca.key" -out "$ca_file" >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$host" -keyout "$work/broker.key" -out "$work/broker.csr" >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
      "$(if [[ "$host" =~ ^[0-9.]+$ ]]; then [ "$host" = 127.0.0.1 ] || echo ",IP:$host"; else echo ",DNS:$host"; fi)" >"$work/ext.cnf"
    openssl x509 -req -in "$work/broker.csr" -CA "$ca_file" -CAkey "$work/ca.key" -CAcreateserial -days 3650 \
      -extfile "$work/ext.cnf" -out "$work/broker.pem" >/dev/null 2>&1
    openssl pkcs12 -export -in "$work/broker.pem" -inkey "$work/broker.key" -certfile "$ca_file" -name broker \
      -out "$keystore" -passout "file:$keystore_password_file" >/dev/null 2>&1
  ) || fail "making the secure listener's certificates failed (openssl)"
  rm -rf "$work"
  chmod 644 "$ca_file"
}

# One argument as a line of a java launcher argument file: quoted, with \ and " escaped.
argfile_line() {
  local v=${1//\\/\\\\}
  printf '"%s"\n' "${v//\"/\\\"}"
}

# shellcheck disable=SC2086 # $heap holds several options
java_cmd() { java $heap -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$log_config" -cp "$libs/*" "$@"; }

start() {
  if pid=$(our_pid); then
    answers "$port" && {
      say "already running (pid $pid) on $host:$port"
      # It keeps the configuration it was started with (server.properties) until it is restarted: say
      # so when this script, or its settings, would now start it with another.
      if [ -f "$password_file" ] && [ -f "$keystore_password_file" ] && ! cmp -s "$props" <(broker_properties); then
        say "its configuration is not what this script would start it with now (an older scripts/kafka.sh, or other settings): scripts/kafka.sh stop, then start, to apply it"
      fi
      echo "$host:$port"
      return 0
    }
  fi
  need_java
  fetch
  if answers "$port" || answers "$controller_port" || answers "$secure_port"; then
    fail "port $port, $controller_port or $secure_port on $host is taken by another process; set SATANG_KAFKA_PORT"
  fi
  make_secure_material
  write_config
  if [ ! -f "$data_dir/meta.properties" ]; then
    say "formatting storage in $data_dir (SCRAM-SHA-512 and SCRAM-SHA-256 user $scram_user)"
    mkdir -p "$data_dir"
    local cluster_id argfile="$secure_dir/format.args" password a
    cluster_id=$(java_cmd kafka.tools.StorageTool random-uuid)
    # The SCRAM password reaches the JVM in an argument file readable by us only (the java launcher reads
    # @files, main class and arguments alike), never on a command line, which any local user can read
    # in /proc while the format runs. The file is made anew (noclobber: not through a link) and removed.
    password=$(cat "$password_file")
    rm -f "$argfile"
    (
      umask 077
      set -C
      for a in kafka.tools.StorageTool format -t "$cluster_id" -c "$props" \
        --add-scram "SCRAM-SHA-512=[name=$scram_user,password=$password]" \
        --add-scram "SCRAM-SHA-256=[name=$scram_user,password=$password]"; do
        argfile_line "$a"
      done >"$argfile"
    ) || fail "could not write $argfile"
    if ! java_cmd "@$argfile" >"$run_dir/format.log" 2>&1; then
      rm -f "$argfile"
      fail "formatting the storage failed: $(tail -n 5 "$run_dir/format.log")"
    fi
    rm -f "$argfile"
    echo "$scram_user" >"$secure_dir/scram-user"
    echo "scram-sha-512 scram-sha-256" >"$secure_dir/scram-mechanisms"
  elif [ "$(cat "$secure_dir/scram-user" 2>/dev/null)" != "$scram_user" ]; then
    fail "the storage in $data_dir was formatted without the SCRAM user $scram_user (before the secure listener existed): scripts/kafka.sh reset, then start"
  fi
  : >"$log_file"
  say "starting Apache Kafka $version on $host:$port (log: $log_file)"
  # setsid: the broker outlives this script and its terminal. It must not inherit the lock (fd 9),
  # or the next call of this script would wait for the broker's whole life.
  # shellcheck disable=SC2086 # $heap holds several options
  setsid java $heap -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$log_config" -cp "$libs/*" kafka.Kafka "$props" \
    >>"$run_dir/stdout.log" 2>&1 </dev/null 9>&- &
  local launched=$!
  echo "$launched" >"$pid_file"
  local waited=0
  until answers "$port" && answers "$secure_port" && grep -q "Kafka Server started" "$log_file" 2>/dev/null; do
    # Whether the process launched is still there, not whether it is the broker yet: until setsid has
    # exec'd java, its command line is still this script's (on a busy machine, for a while).
    if ! running "$launched"; then
      fail "the broker exited during start-up: $(tail -n 20 "$run_dir/stdout.log" "$log_file" 2>/dev/null)"
    fi
    if [ "$waited" -ge $((start_timeout * 4)) ]; then
      fail "the broker did not answer on $host:$port within ${start_timeout}s (log: $log_file)"
    fi
    sleep 0.25
    waited=$((waited + 1))
  done
  say "ready after $((waited / 4))s"
  echo "$host:$port"
}

stop() {
  local pid
  if ! pid=$(our_pid); then
    say "not running"
    rm -f "$pid_file"
    return 0
  fi
  say "stopping pid $pid"
  kill -TERM "$pid"
  for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || {
      rm -f "$pid_file"
      say "stopped"
      return 0
    }
    sleep 0.25
  done
  say "still running after 30s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pid_file"
}

status() {
  local pid
  if pid=$(our_pid) && answers "$port"; then
    say "running (pid $pid) on $host:$port"
    return 0
  fi
  say "not running on $host:$port"
  return 1
}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

# One call at a time per broker: a start racing a stop (or another start) waits its turn.
locked() {
  mkdir -p "$run_dir"
  exec 9>"$run_dir/.lock"
  flock 9
  "$@"
}

case "${1:-}" in
start) locked start ;;
stop) locked stop ;;
status) status ;;
fetch) need_java && fetch ;;
reset) locked stop && rm -rf "$data_dir" && say "data removed" ;;
env)
  printf '%s=%q\n' SATANG_TEST_KAFKA_BROKERS "$host:$port" SATANG_TEST_KAFKA_SECURE_BROKERS "$host:$secure_port" \
    SATANG_TEST_KAFKA_SECURE_CA_FILE "$ca_file" SATANG_TEST_KAFKA_SECURE_USERNAME "$scram_user" \
    SATANG_TEST_KAFKA_SECURE_PASSWORD_FILE "$password_file" \
    SATANG_TEST_KAFKA_SECURE_MECHANISMS "$(cat "$secure_dir/scram-mechanisms" 2>/dev/null || echo scram-sha-512) plain"
  ;;
-h | --help | help) usage ;;
*)
  usage >&2
  exit 2
  ;;
esac

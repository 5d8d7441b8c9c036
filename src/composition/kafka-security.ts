import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto'
import { readTextBounded, readFailureText, READ_LIMITS } from '../adapters/os/bounded-read.ts'
import { readFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import type { KafkaSecurity } from '../adapters/kafka/publisher.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'

/**
 * The relay's TLS and SASL settings, read at start: the SASL password from its file, and the PEM files
 * of the CA, the client certificate and its key, each checked for what it must hold. A problem (left)
 * names the variable and the file, never the content.
 */

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

const readText = async (variable: string, path: string, maxBytes: number): Promise<E.Either<string, string>> => {
  try {
    return E.right(await readTextBounded(path, maxBytes))
  } catch (e) {
    return E.left(`${variable}: cannot read ${JSON.stringify(path)} (${readFailureText(e)})`)
  }
}

/** The certificates of a PEM file, or why it is not one. */
const certificatesOf = async (variable: string, path: string): Promise<E.Either<string, ReadonlyArray<X509Certificate>>> => {
  const text = await readText(variable, path, READ_LIMITS.certificates)
  if (E.isLeft(text)) return text
  const blocks = text.right.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) return E.left(`${variable}: ${JSON.stringify(path)} is not a PEM certificate file (no -----BEGIN CERTIFICATE----- block)`)
  const out: X509Certificate[] = []
  for (const [i, block] of blocks.entries()) {
    try {
      out.push(new X509Certificate(block))
    } catch {
      return E.left(`${variable}: certificate ${String(i + 1)} of ${JSON.stringify(path)} is not a valid X.509 certificate`)
    }
  }
  return E.right(out)
}

const privateKeyOf = async (variable: string, path: string): Promise<E.Either<string, KeyObject>> => {
  const text = await readText(variable, path, READ_LIMITS.key)
  if (E.isLeft(text)) return text
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text.right)) return E.left(`${variable}: ${JSON.stringify(path)} is not a PEM private key (no -----BEGIN … PRIVATE KEY----- block)`)
  if (/ENCRYPTED/.test(text.right)) return E.left(`${variable}: ${JSON.stringify(path)} is an encrypted private key: give the key unencrypted, in a file only satang can read`)
  try {
    return E.right(createPrivateKey(text.right))
  } catch {
    return E.left(`${variable}: ${JSON.stringify(path)} is not a readable PEM private key`)
  }
}

/** Checks the Kafka security files and reads the SASL password file into SATANG_KAFKA_SASL_PASSWORD. */
export const withKafkaSecurityFiles = async (config: Config): Promise<E.Either<string, Config>> => {
  let out = config
  if (config.SATANG_KAFKA_SASL_PASSWORD_FILE !== undefined) {
    const path = config.SATANG_KAFKA_SASL_PASSWORD_FILE
    const text = await readText('SATANG_KAFKA_SASL_PASSWORD_FILE', path, READ_LIMITS.secret)
    if (E.isLeft(text)) return text
    // A secret file usually ends with a newline; the password itself never does.
    const password = text.right.replace(/\r?\n$/, '')
    if (password.trim() === '') return E.left(`SATANG_KAFKA_SASL_PASSWORD_FILE: ${JSON.stringify(path)} is empty`)
    if (/[\r\n]/.test(password)) return E.left(`SATANG_KAFKA_SASL_PASSWORD_FILE: ${JSON.stringify(path)} must hold one line (the password)`)
    out = { ...out, SATANG_KAFKA_SASL_PASSWORD: password }
  }
  if (config.SATANG_KAFKA_SSL_CA_FILE !== undefined) {
    const ca = await certificatesOf('SATANG_KAFKA_SSL_CA_FILE', config.SATANG_KAFKA_SSL_CA_FILE)
    if (E.isLeft(ca)) return ca
  }
  if (config.SATANG_KAFKA_SSL_CERT_FILE !== undefined && config.SATANG_KAFKA_SSL_KEY_FILE !== undefined) {
    const cert = await certificatesOf('SATANG_KAFKA_SSL_CERT_FILE', config.SATANG_KAFKA_SSL_CERT_FILE)
    if (E.isLeft(cert)) return cert
    const key = await privateKeyOf('SATANG_KAFKA_SSL_KEY_FILE', config.SATANG_KAFKA_SSL_KEY_FILE)
    if (E.isLeft(key)) return key
    const leaf = cert.right[0]
    if (leaf !== undefined && !leaf.checkPrivateKey(key.right)) {
      return E.left(`SATANG_KAFKA_SSL_KEY_FILE: the key in ${JSON.stringify(config.SATANG_KAFKA_SSL_KEY_FILE)} is not the key of the certificate in SATANG_KAFKA_SSL_CERT_FILE`)
    }
  }
  return E.right(out)
}

/**
 * The publisher's security settings (files already checked by `withKafkaSecurityFiles`); warns loudly when
 * certificates are not checked, and when a SASL password would travel without TLS.
 */
export const kafkaSecurityOf = (config: Config, log: Logger): KafkaSecurity => {
  const tls = config.SATANG_KAFKA_SSL === 'true'
  const rejectUnauthorized = config.SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED !== 'false'
  if (tls && !rejectUnauthorized) {
    log.warn(
      { setting: 'SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED' },
      "WARNING: SATANG_KAFKA_SSL_REJECT_UNAUTHORIZED=false: the relay does NOT check the brokers' certificates; anyone on the network path can pose as the broker and read every event. Never use this in production: give the broker's CA in SATANG_KAFKA_SSL_CA_FILE instead",
    )
  }
  const mechanism = config.SATANG_KAFKA_SASL_MECHANISM
  if (mechanism !== undefined && !tls) {
    log.warn({ setting: 'SATANG_KAFKA_SSL' }, `WARNING: SASL ${mechanism} without TLS (SATANG_KAFKA_SSL=false): ${mechanism === 'plain' ? 'the password' : 'the user name'} and every event cross the network unencrypted`)
  }
  // loadConfig has read the password file into SATANG_KAFKA_SASL_PASSWORD; a configuration decoded
  // without it (satang started in-process) reads the file here.
  const passwordFile = config.SATANG_KAFKA_SASL_PASSWORD_FILE
  const password = config.SATANG_KAFKA_SASL_PASSWORD ?? (passwordFile === undefined ? '' : readFileSync(passwordFile, 'utf8').replace(/\r?\n$/, ''))
  const read = (path: string | undefined): string | undefined => (path === undefined ? undefined : readFileSync(path, 'utf8'))
  const ca = read(config.SATANG_KAFKA_SSL_CA_FILE)
  const cert = read(config.SATANG_KAFKA_SSL_CERT_FILE)
  const key = read(config.SATANG_KAFKA_SSL_KEY_FILE)
  return {
    ...(tls ? { tls: { rejectUnauthorized, ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) } } : {}),
    ...(mechanism === undefined || config.SATANG_KAFKA_SASL_USERNAME === undefined ? {} : { sasl: { mechanism, username: config.SATANG_KAFKA_SASL_USERNAME, password: () => password } }),
  }
}

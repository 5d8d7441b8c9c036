// The container health check (Dockerfile HEALTHCHECK, docker-compose.yml): exit 0 when satang's
// /healthz (or the URL given as the first argument) answers 200 within 3 s, else 1 with the reason on
// stderr. Node only: the slim image has no curl. Reads SATANG_HTTP_PORT as satang does (default 8080).
const port = process.env['SATANG_HTTP_PORT'] ?? '8080'
const url = process.argv[2] ?? `http://127.0.0.1:${port === '0' ? '8080' : port}/healthz`
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) })
  if (res.status !== 200) {
    process.stderr.write(`healthcheck: ${url} answered ${String(res.status)}: ${(await res.text()).slice(0, 300)}\n`)
    process.exitCode = 1
  }
} catch (e) {
  process.stderr.write(`healthcheck: ${url}: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exitCode = 1
}

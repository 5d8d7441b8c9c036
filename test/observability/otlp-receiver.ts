import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One span as the test reads it: ids in lowercase hex. */
export type ReceivedSpan = {
  readonly service: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly attributes: Readonly<Record<string, string | number>>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

/** A real OTLP/HTTP receiver (`POST /v1/traces`, http/protobuf and http/json): every span it was sent. */
export type OtlpReceiver = {
  readonly url: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** The content types of the requests received. */
  readonly contentTypes: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

// --- protobuf wire format, enough of opentelemetry/proto/collector/trace/v1 to read spans ---
type Field = { readonly no: number; readonly varint?: bigint; readonly bytes?: Buffer }

const fieldsOf = (b: Buffer): Field[] => {
  const out: Field[] = []
  let i = 0
  const varint = (): bigint => {
    let shift = 0n
    let v = 0n
    for (;;) {
      const byte = b[i++]
      if (byte === undefined) throw new Error('truncated varint')
      v |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return v
      shift += 7n
    }
  }
  while (i < b.length) {
    const key = Number(varint())
    const no = key >> 3
    const wire = key & 7
    if (wire === 0) out.push({ no, varint: varint() })
    else if (wire === 1) {
      out.push({ no, bytes: b.subarray(i, i + 8) })
      i += 8
    } else if (wire === 2) {
      const len = Number(varint())
      out.push({ no, bytes: b.subarray(i, i + len) })
      i += len
    } else if (wire === 5) {
      out.push({ no, bytes: b.subarray(i, i + 4) })
      i += 4
    } else throw new Error(`unsupported wire type ${String(wire)}`)
  }
  return out
}
const sub = (fields: ReadonlyArray<Field>, no: number): Buffer[] => fields.filter((f) => f.no === no && f.bytes !== undefined).map((f) => f.bytes as Buffer)
const one = (fields: ReadonlyArray<Field>, no: number): Buffer => sub(fields, no)[0] ?? Buffer.alloc(0)

const keyValues = (buffers: ReadonlyArray<Buffer>): Record<string, string | number> => {
  const out: Record<string, string | number> = {}
  for (const kv of buffers) {
    const f = fieldsOf(kv)
    const value = fieldsOf(one(f, 2))
    const s = sub(value, 1)[0]
    const n = value.find((x) => x.no === 3)?.varint
    out[one(f, 1).toString('utf8')] = s !== undefined ? s.toString('utf8') : n !== undefined ? Number(n) : ''
  }
  return out
}

export const decodeProtobuf = (body: Buffer): ReceivedSpan[] =>
  sub(fieldsOf(body), 1).flatMap((rs) => {
    const rsf = fieldsOf(rs)
    const service = String(keyValues(sub(fieldsOf(one(rsf, 1)), 1))['service.name'] ?? '')
    return sub(rsf, 2).flatMap((ss) =>
      sub(fieldsOf(ss), 2).map((sp): ReceivedSpan => {
        const f = fieldsOf(sp)
        return {
          service,
          traceId: one(f, 1).toString('hex'),
          spanId: one(f, 2).toString('hex'),
          parentSpanId: one(f, 4).toString('hex'),
          name: one(f, 5).toString('utf8'),
          attributes: keyValues(sub(f, 9)),
          links: sub(f, 13).map((l) => {
            const lf = fieldsOf(l)
            return { traceId: one(lf, 1).toString('hex'), spanId: one(lf, 2).toString('hex') }
          }),
        }
      }),
    )
  })

// --- http/json ---
type JsonKv = { key: string; value: { stringValue?: string; intValue?: string | number } }
const hex = (id: string | undefined): string => (id === undefined || id === '' ? '' : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex'))
const jsonAttributes = (kvs: ReadonlyArray<JsonKv> | undefined): Record<string, string | number> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, kv.value.stringValue ?? Number(kv.value.intValue ?? NaN)]))

export const decodeJson = (body: Buffer): ReceivedSpan[] => {
  const doc = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{
      resource?: { attributes?: JsonKv[] }
      scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: JsonKv[]; links?: Array<{ traceId: string; spanId: string }> }> }>
    }>
  }
  return (doc.resourceSpans ?? []).flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '')
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId),
        name: s.name,
        attributes: jsonAttributes(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
      })),
    )
  })
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: ReceivedSpan[] = []
  const types: string[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const type = req.headers['content-type'] ?? ''
      types.push(type)
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end()
        return
      }
      const body = Buffer.concat(chunks)
      try {
        spans.push(...(type.startsWith('application/json') ? decodeJson(body) : decodeProtobuf(body)))
        res.writeHead(200, { 'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' }).end(type.startsWith('application/json') ? '{}' : '')
      } catch (e) {
        res.writeHead(400).end(String(e))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${String(port)}`,
    spans: () => [...spans],
    contentTypes: () => [...types],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

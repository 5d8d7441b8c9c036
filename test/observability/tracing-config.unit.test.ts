import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { decodeConfig, formatConfigErrors, type Config } from '../../src/config.ts'
import { tracingSettingsOf } from '../../src/composition/tracing.ts'

const config = (env: Record<string, string>): Config => {
  const c = decodeConfig(env)
  if (E.isLeft(c)) throw new Error(formatConfigErrors(c.left))
  return c.right
}

describe('the OTEL_* variables satang reads', () => {
  it('leave tracing off without an endpoint, and default the rest the standard way', () => {
    const s = tracingSettingsOf(config({}), 'api', '1.2.3')
    expect(s).toMatchObject({ url: undefined, protocol: 'http/protobuf', serviceName: 'satang-api', sampler: 'parentbased_always_on', samplerRatio: 1, scheduleDelayMs: 5000, resourceAttributes: {} })
  })

  it('send spans to {endpoint}/v1/traces, or to the traces endpoint as given, in the protocol asked for', () => {
    expect(tracingSettingsOf(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), 'all', '1').url).toBe('http://collector:4318/v1/traces')
    const s = tracingSettingsOf(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'payments', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=pay%20ops' }),
      'relay',
      '1',
    )
    expect(s).toMatchObject({ url: 'https://b/traces', protocol: 'http/json', serviceName: 'payments', sampler: 'traceidratio', samplerRatio: 0.25, resourceAttributes: { 'deployment.environment.name': 'prod', team: 'pay ops' } })
  })

  it('refuse bad values with an error naming each variable and its rule', () => {
    const r = decodeConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'sometimes', OTEL_TRACES_SAMPLER_ARG: '1.5', OTEL_RESOURCE_ATTRIBUTES: '=nokey' })
    expect(E.isLeft(r) ? r.left.map((e) => e.variable).sort() : []).toEqual(['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'])
    expect(E.isLeft(r) ? formatConfigErrors(r.left) : '').toContain('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (environment): must be one of http/protobuf, http/json')
  })
})

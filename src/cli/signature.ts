import type { Command } from 'commander'
import * as E from 'fp-ts/lib/Either.js'
import type { KeyObject } from 'node:crypto'
import { canonicalizers, type Canonicalizer } from '../domain/gateway/canonical.ts'
import { loadPrivateKey, loadPublicKey, makeSigner, makeVerifier, signedForm, type VerifyResult } from '../domain/gateway/signing.ts'
import { EXIT, UsageError, readFieldsJson, readTextFile } from './io.ts'
import { READ_LIMITS } from '../adapters/os/bounded-read.ts'

const pickCanonicalizer = (name: string): Canonicalizer => {
  const c = canonicalizers[name]
  if (c === undefined) throw new UsageError(`--canonicalizer must be one of ${Object.keys(canonicalizers).join(', ')}`)
  return c
}

const readKey = async (path: string, kind: 'private' | 'public'): Promise<KeyObject> => {
  const pem = await readTextFile(path, `${kind} key file`, READ_LIMITS.key)
  const key = kind === 'private' ? loadPrivateKey(pem) : loadPublicKey(pem)
  if (E.isLeft(key)) throw new UsageError(`--${kind}-key ${JSON.stringify(path)}: ${key.left.message}`)
  return key.right
}

type Common = { fields?: string; canonicalizer: string; json?: boolean }

/** `satang signature canonical|sign|verify`: the signing convention, usable by any merchant's tooling. */
export const registerSignatureCommands = (program: Command, setExitCode: (code: number) => void): void => {
  const signature = program
    .command('signature')
    .description('canonical string, signing and verification of gateway field sets (satang-canonical-v1 + RSA-SHA256)')
  const common = (cmd: Command): Command =>
    cmd
      .option('--fields <file>', 'JSON object of fields (default: read it from stdin)')
      .option('--canonicalizer <name>', `canonical-string strategy (${Object.keys(canonicalizers).join(', ')})`, 'satang-canonical-v1')
      .option('--json', 'print a JSON object instead of plain text')

  common(signature.command('canonical').description('print the canonical string that would be signed')).action(async (opts: Common) => {
    const c = pickCanonicalizer(opts.canonicalizer)
    const canonical = c.canonicalize(await readFieldsJson(opts.fields))
    process.stdout.write(opts.json === true ? `${JSON.stringify({ canonicalizer: c.name, canonical })}\n` : `${canonical}\n`)
  })

  common(signature.command('sign').description('sign the fields with an RSA private key; prints the base64 signature'))
    .requiredOption('--private-key <file>', 'PEM file of the RSA private key')
    .option('--form', 'print the fields with sign_type and sign added, as a gateway redirect form or notification carries them')
    .action(async (opts: Common & { privateKey: string; form?: boolean }) => {
      const c = pickCanonicalizer(opts.canonicalizer)
      const signer = makeSigner(c, await readKey(opts.privateKey, 'private'))
      const fields = await readFieldsJson(opts.fields)
      if (opts.form === true) {
        process.stdout.write(`${JSON.stringify(signedForm(signer, fields))}\n`)
        return
      }
      const sig = signer.sign(fields)
      process.stdout.write(opts.json === true ? `${JSON.stringify({ canonicalizer: c.name, canonical: c.canonicalize(fields), sign_type: 'RSA', sign: sig })}\n` : `${sig}\n`)
    })

  common(signature.command('verify').description('verify a signature; exit 0 when valid, 1 when not (with a one-line reason)'))
    .requiredOption('--public-key <file>', 'PEM file of the RSA public key')
    .option('--signature <sig>', 'the base64 signature (default: the sign field of the fields)')
    .action(async (opts: Common & { publicKey: string; signature?: string }) => {
      const c = pickCanonicalizer(opts.canonicalizer)
      const verifier = makeVerifier(c, await readKey(opts.publicKey, 'public'))
      const fields = await readFieldsJson(opts.fields)
      const unsigned = opts.signature === undefined && (fields['sign'] === undefined || fields['sign'] === null)
      const result: VerifyResult = unsigned ? { valid: false, reason: 'no signature: neither --signature nor a sign field was given' } : verifier.verify(fields, opts.signature)
      if (opts.json === true) process.stdout.write(`${JSON.stringify(result)}\n`)
      else process.stdout.write(result.valid ? 'valid\n' : `invalid: ${result.reason}\n`)
      setExitCode(result.valid ? EXIT.ok : EXIT.negative)
    })
}

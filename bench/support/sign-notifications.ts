// Signs PAYMENT notifications (order_status PS) for the seeded checkouts `from` … `from + count - 1`
// with the gateway's private key, as the gateway would send them; one JSON body per line to `out`.
// Run before the clock starts (two processes side by side): the gateway's signing is not satang's cost.
//   node bench/support/sign-notifications.ts <gatewayPrivateKeyPem> <from> <count> <out>
import { readFileSync, writeFileSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { satangCanonicalV1 } from '../../src/domain/gateway/canonical.ts'
import { loadPrivateKey, makeSigner, signedForm } from '../../src/domain/gateway/signing.ts'
import { MERCHANT_ID, seededAmountText, seededGatewayOrderId, seededOrderId } from './seeded.ts'

const [keyFile, fromText, countText, out] = process.argv.slice(2)
if (keyFile === undefined || fromText === undefined || countText === undefined || out === undefined) {
  process.stderr.write('usage: sign-notifications.ts <gatewayPrivateKeyPem> <from> <count> <out>\n')
  process.exit(2)
}
const key = loadPrivateKey(readFileSync(keyFile, 'utf8'))
if (E.isLeft(key)) throw new Error(key.left.message)
const signer = makeSigner(satangCanonicalV1, key.right)
const from = Number(fromText)
const lines: string[] = []
for (let n = from; n < from + Number(countText); n++) {
  lines.push(
    JSON.stringify(
      signedForm(signer, {
        notify_type: 'PAYMENT',
        merchant_id: MERCHANT_ID,
        merchant_order_id: seededOrderId(n),
        order_id: seededGatewayOrderId(n),
        order_status: 'PS',
        order_amount: seededAmountText(n),
        order_currency: 'THB',
        order_desc: 'Bench',
        create_time: '2026-11-25 10:00:00',
        complete_time: '2026-11-25 10:01:00',
      }),
    ),
  )
}
writeFileSync(out, lines.length === 0 ? '' : `${lines.join('\n')}\n`)
process.stdout.write(`${JSON.stringify({ signed: lines.length })}\n`)

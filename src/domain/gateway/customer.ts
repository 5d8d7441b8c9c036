import * as t from 'io-ts'
import { AmountText } from '../money.ts'
import { checkedRecord } from './checked-record.ts'
import { IpAddress } from './fields.ts'
import { anyText, matches, textWith } from './text-codecs.ts'

/*
 * The spec lists the fields "that occur" in Customer, Product and Client but not their types, lengths
 * or requiredness ("not shown"). So every listed field is an optional string, and these objects stay
 * open: a field not listed here is kept as sent (it is part of the signed body) rather than rejected.
 */

const Address = checkedRecord(
  t.partial(
    {
      country: anyText('country'),
      state: anyText('state'),
      city: anyText('city'),
      district: anyText('district'),
      house_number: anyText('house_number'),
      street_name: anyText('street_name'),
    },
    'Address',
  ),
)

/** Customer (object): payer info; `address` is an object. */
export const Customer = checkedRecord(
  t.partial(
    {
      merchant_user_id: anyText('merchant_user_id'),
      full_name: anyText('full_name'),
      customer_type: anyText('customer_type'),
      first_name: anyText('first_name'),
      last_name: anyText('last_name'),
      gender: anyText('gender'),
      id_type: anyText('id_type'),
      id_no: anyText('id_no'),
      email: anyText('email'),
      phone: anyText('phone'),
      company: anyText('company'),
      address: Address,
    },
    'Customer',
  ),
)
export type Customer = t.TypeOf<typeof Customer>

/**
 * Product (element of `products`). Conventions: values are strings "including amounts and counts",
 * and amounts have at most two decimals, so `unit_price` follows the amount rules and `quantity` is a
 * digit string.
 */
export const Product = checkedRecord(
  t.partial(
    {
      name: anyText('name'),
      description: anyText('description'),
      quantity: textWith('quantity', [matches(/^\d+$/, 'must be a whole number as a digit string')]),
      unit_price: AmountText,
      category: anyText('category'),
      show_url: anyText('show_url'),
      product_id: anyText('product_id'),
      sku: anyText('sku'),
      shipping_provider: anyText('shipping_provider'),
    },
    'Product',
  ),
)
export type Product = t.TypeOf<typeof Product>

/** `products`: a list of Product ("must be a list" on anything else). */
export const Products = t.array(Product, 'a list')
export type Products = t.TypeOf<typeof Products>

/** Client (object): `remote_ip`, the payer IP address, required for wallet_b H5_PAYMENT. */
export const Client = checkedRecord(t.type({ remote_ip: IpAddress }, 'Client'))
export type Client = t.TypeOf<typeof Client>

/** Card (object), required for `svc.bankcard.pay`. Its fields are "not shown": any object is accepted as is. */
export const Card = checkedRecord(t.UnknownRecord, [], 'Card')
export type Card = t.TypeOf<typeof Card>

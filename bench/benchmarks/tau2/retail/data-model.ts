// The retail database in zod, field for field as τ²'s `tau2.domains.retail.data_model` (the order is the dump's).
import { z } from "zod"
import { pyDict, pyFloat, pyModel, pyOptional } from "../py-model.ts"

export const Variant = pyModel({
  item_id: z.string(),
  options: pyDict(z.string()),
  available: z.boolean(),
  price: pyFloat()
})
export type Variant = z.infer<typeof Variant>

export const Product = pyModel({
  name: z.string(),
  product_id: z.string(),
  variants: pyDict(Variant)
})
export type Product = z.infer<typeof Product>

export const UserName = pyModel({ first_name: z.string(), last_name: z.string() })

export const UserAddress = pyModel({
  address1: z.string(),
  address2: z.string(),
  city: z.string(),
  country: z.string(),
  state: z.string(),
  zip: z.string()
})
export type UserAddress = z.infer<typeof UserAddress>

export const CreditCard = pyModel({
  source: z.literal("credit_card"),
  id: z.string(),
  brand: z.string(),
  last_four: z.string()
})
export const GiftCard = pyModel({ source: z.literal("gift_card"), id: z.string(), balance: pyFloat() })
export const Paypal = pyModel({ source: z.literal("paypal"), id: z.string() })
export const PaymentMethod = z.union([CreditCard, GiftCard, Paypal])
export type PaymentMethod = z.infer<typeof PaymentMethod>
export type GiftCard = z.infer<typeof GiftCard>

export const User = pyModel({
  user_id: z.string(),
  name: UserName,
  address: UserAddress,
  email: z.string(),
  payment_methods: pyDict(PaymentMethod),
  orders: z.array(z.string())
})
export type User = z.infer<typeof User>

export const OrderFulfillment = pyModel({ tracking_id: z.array(z.string()), item_ids: z.array(z.string()) })

export const OrderItem = pyModel({
  name: z.string(),
  product_id: z.string(),
  item_id: z.string(),
  price: pyFloat(),
  options: pyDict(z.string())
})
export type OrderItem = z.infer<typeof OrderItem>

export const OrderPayment = pyModel({
  transaction_type: z.enum(["payment", "refund"]),
  amount: pyFloat(),
  payment_method_id: z.string()
})
export type OrderPayment = z.infer<typeof OrderPayment>

export const OrderStatus = z.enum([
  "processed",
  "pending",
  "pending (item modified)",
  "delivered",
  "cancelled",
  "exchange requested",
  "return requested"
])

export const Order = pyModel({
  order_id: z.string(),
  user_id: z.string(),
  address: UserAddress,
  items: z.array(OrderItem),
  status: OrderStatus,
  fulfillments: z.array(OrderFulfillment),
  payment_history: z.array(OrderPayment),
  cancel_reason: pyOptional(z.enum(["no longer needed", "ordered by mistake"])),
  exchange_items: pyOptional(z.array(z.string())),
  exchange_new_items: pyOptional(z.array(z.string())),
  exchange_payment_method_id: pyOptional(z.string()),
  // a float, or Python's int 0 (a bigint here) when an exchange had no items: τ² assigns it unvalidated
  exchange_price_difference: pyOptional(z.union([pyFloat(), z.bigint()])),
  return_items: pyOptional(z.array(z.string())),
  return_payment_method_id: pyOptional(z.string())
})
export type Order = z.infer<typeof Order>

/** `RetailDB`: products, users and orders, each indexed by id; no other top-level field (`extra="forbid"`). */
export const RetailDb = pyModel(
  { products: pyDict(Product), users: pyDict(User), orders: pyDict(Order) },
  { strict: true }
)
export type RetailDb = z.infer<typeof RetailDb>

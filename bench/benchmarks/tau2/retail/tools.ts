// τ²-bench's retail tools (`tau2.domains.retail.tools.RetailTools`), ported line for line: the same checks in the
// same order, the same error texts, the same writes (including τ²'s quirks, noted where they are kept).
import { z } from "zod"
import { type Tau2ParamSpec, Tau2ToolError, type Tau2ToolSpec } from "../domain.ts"
import { calculateTool, transferToHumanAgentsTool } from "../generic-tools.ts"
import { type PyValue, pyJsonDumps, pyRound, writableEntry } from "../python-json.ts"
import type { GiftCard, Order, OrderPayment, PaymentMethod, Product, RetailDb, User, Variant } from "./data-model.ts"

const fail = (message: string): never => {
  throw new Tau2ToolError(message)
}

const getOrder = (db: RetailDb, orderId: string): Order => db.orders.get(orderId) ?? fail("Order not found")
const getUser = (db: RetailDb, userId: string): User => db.users.get(userId) ?? fail("User not found")
// The same lookups for a tool that writes: the entry becomes this conversation's own copy first (see copyCollections)
const getOrderToWrite = (db: RetailDb, orderId: string): Order =>
  writableEntry(db.orders, orderId) ?? fail("Order not found")
const getUserToWrite = (db: RetailDb, userId: string): User => writableEntry(db.users, userId) ?? fail("User not found")
const getPaymentMethodToWrite = (db: RetailDb, userId: string, paymentMethodId: string): PaymentMethod =>
  getUserToWrite(db, userId).payment_methods.get(paymentMethodId) ?? fail("Payment method not found")
const getProduct = (db: RetailDb, productId: string): Product => db.products.get(productId) ?? fail("Product not found")
const getItem = (db: RetailDb, itemId: string): Variant => {
  for (const product of db.products.values()) {
    const variant = product.variants.get(itemId)
    if (variant !== undefined) return variant
  }
  return fail("Item not found")
}
const getVariant = (db: RetailDb, productId: string, variantId: string): Variant =>
  getProduct(db, productId).variants.get(variantId) ?? fail("Variant not found")
const getPaymentMethod = (db: RetailDb, userId: string, paymentMethodId: string): PaymentMethod =>
  getUser(db, userId).payment_methods.get(paymentMethodId) ?? fail("Payment method not found")
const isGiftCard = (method: PaymentMethod): method is GiftCard => method.source === "gift_card"
const isPendingOrder = (order: Order): boolean => order.status.includes("pending")
const count = (list: ReadonlyArray<string>, value: string): number => list.filter((x) => x === value).length
/** Python's `sorted` of a list of str (code-unit order equals code-point order for the ids used). */
const sorted = (list: ReadonlyArray<string>): Array<string> => [...list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
/** `list[0]` of Python: an IndexError on an empty list. */
const first = <T>(list: ReadonlyArray<T>): T => (list.length > 0 ? (list[0] as T) : fail("list index out of range"))

// Descriptions and parameter texts are τ²'s docstrings as docstring_parser reads them (short + "\n\n" + long).
const ORDER_ID = "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id."
const USER_ID = "The user id, such as 'sara_doe_496'."
const CONFIRM =
  "The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed."

const str = (name: string, description: string): Tau2ParamSpec => ({ name, schema: z.string(), description })
const strList = (name: string, description: string): Tau2ParamSpec => ({
  name,
  schema: z.array(z.string()),
  description
})
const addressParams: ReadonlyArray<Tau2ParamSpec> = [
  str("address1", "The first line of the address, such as '123 Main St'."),
  str("address2", "The second line of the address, such as 'Apt 1' or ''."),
  str("city", "The city, such as 'San Francisco'."),
  str("state", "The state, such as 'CA'."),
  str("country", "The country, such as 'USA'."),
  str("zip", "The zip code, such as '12345'.")
]

type Args = Record<string, unknown>
const s = (args: Args, name: string) => args[name] as string
const list = (args: Args, name: string) => args[name] as Array<string>

const addressOf = (args: Args) => ({
  address1: s(args, "address1"),
  address2: s(args, "address2"),
  city: s(args, "city"),
  country: s(args, "country"),
  state: s(args, "state"),
  zip: s(args, "zip")
})

const payment = (transaction_type: OrderPayment["transaction_type"], amount: number, payment_method_id: string) => ({
  transaction_type,
  amount,
  payment_method_id
})

/** The retail tools in τ²'s definition order. */
export const RETAIL_TOOLS: ReadonlyArray<Tau2ToolSpec<RetailDb>> = [
  calculateTool(),
  {
    name: "cancel_pending_order",
    type: "write",
    description:
      "Cancel a pending order. If the order is already processed or delivered,\n\nit cannot be cancelled. The agent needs to explain the cancellation detail\nand ask for explicit user confirmation (yes/no) to proceed. If the user confirms,\nthe order status will be changed to 'cancelled' and the payment will be refunded.\nThe refund will be added to the user's gift card balance immediately if the payment\nwas made using a gift card, otherwise the refund would take 5-7 business days to process.\nThe function returns the order details after the cancellation.",
    params: [
      str("order_id", ORDER_ID),
      str("reason", "The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.")
    ],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (order.status !== "pending") fail("Non-pending order cannot be cancelled")
      const reason = s(args, "reason")
      if (reason !== "no longer needed" && reason !== "ordered by mistake") fail("Invalid reason")
      const refunds: Array<OrderPayment> = []
      for (const paid of order.payment_history) {
        refunds.push(payment("refund", paid.amount, paid.payment_method_id))
        const user = getUser(db, order.user_id)
        const method = getPaymentMethodToWrite(db, user.user_id, paid.payment_method_id)
        if (isGiftCard(method)) {
          method.balance += paid.amount
          method.balance = pyRound(method.balance, 2)
        }
      }
      order.status = "cancelled"
      order.cancel_reason = reason as Order["cancel_reason"]
      order.payment_history.push(...refunds)
      return order as PyValue
    }
  },
  {
    name: "exchange_delivered_order_items",
    type: "write",
    description:
      "Exchange items in a delivered order to new items of the same product type.\n\nFor a delivered order, return or exchange can be only done once by the agent.\nThe agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.",
    params: [
      str("order_id", ORDER_ID),
      strList(
        "item_ids",
        "The item ids to be exchanged, each such as '1008292230'. There could be duplicate items in the list."
      ),
      strList(
        "new_item_ids",
        "The item ids to be exchanged for, each such as '1008292230'.\nThere could be duplicate items in the list. Each new item id should match the item id\nin the same position and be of the same product."
      ),
      str(
        "payment_method_id",
        "The payment method id to pay or receive refund for the item price difference,\nsuch as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up\nfrom the user or order details."
      )
    ],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (order.status !== "delivered") fail("Non-delivered order cannot be exchanged")
      const itemIds = list(args, "item_ids")
      const newItemIds = list(args, "new_item_ids")
      const allItemIds = order.items.map((item) => item.item_id)
      for (const itemId of itemIds)
        if (count(itemIds, itemId) > count(allItemIds, itemId)) fail(`Number of ${itemId} not found.`)
      if (itemIds.length !== newItemIds.length) fail("The number of items to be exchanged should match.")
      // Python's int 0 until a price is added (the difference of an exchange of no items stays an int)
      let diffPrice: number | undefined
      for (let k = 0; k < itemIds.length; k++) {
        const itemId = itemIds[k] as string
        const newItemId = newItemIds[k] as string
        const item = order.items.find((x) => x.item_id === itemId) ?? fail(`Item ${itemId} not found`)
        const variant = getVariant(db, item.product_id, newItemId)
        if (!variant.available) fail(`New item ${newItemId} not found or available`)
        diffPrice = (diffPrice ?? 0) + (variant.price - item.price)
      }
      const difference = diffPrice === undefined ? undefined : pyRound(diffPrice, 2)
      const paymentMethodId = s(args, "payment_method_id")
      const method = getPaymentMethod(db, order.user_id, paymentMethodId)
      if (isGiftCard(method) && method.balance < (difference ?? 0))
        fail("Insufficient gift card balance to pay for the price difference")
      order.status = "exchange requested"
      order.exchange_items = sorted(itemIds)
      order.exchange_new_items = sorted(newItemIds)
      order.exchange_payment_method_id = paymentMethodId
      order.exchange_price_difference = difference ?? 0n
      return order as PyValue
    }
  },
  {
    name: "find_user_id_by_name_zip",
    type: "read",
    description:
      "Find user id by first name, last name, and zip code. If the user is not found, the function\n\nwill return an error message. By default, find user id by email, and only call this function\nif the user is not found by email or cannot remember email.",
    params: [
      str("first_name", "The first name of the customer, such as 'John'."),
      str("last_name", "The last name of the customer, such as 'Doe'."),
      str("zip", "The zip code of the customer, such as '12345'.")
    ],
    run: (db, args) => {
      const first = s(args, "first_name").toLowerCase()
      const last = s(args, "last_name").toLowerCase()
      for (const [userId, user] of db.users)
        if (
          user.name.first_name.toLowerCase() === first &&
          user.name.last_name.toLowerCase() === last &&
          user.address.zip === s(args, "zip")
        )
          return userId
      return fail("User not found")
    }
  },
  {
    name: "find_user_id_by_email",
    type: "read",
    description: "Find user id by email. If the user is not found, the function will return an error message.",
    params: [str("email", "The email of the user, such as 'something@example.com'.")],
    run: (db, args) => {
      const email = s(args, "email").toLowerCase()
      for (const [userId, user] of db.users) if (user.email.toLowerCase() === email) return userId
      return fail("User not found")
    }
  },
  {
    name: "get_order_details",
    type: "read",
    description: "Get the status and details of an order.",
    params: [str("order_id", ORDER_ID)],
    run: (db, args) => getOrder(db, s(args, "order_id")) as PyValue
  },
  {
    name: "get_product_details",
    type: "read",
    description: "Get the inventory details of a product.",
    params: [
      str(
        "product_id",
        "The product id, such as '6086499569'. Be careful the product id is different from the item id."
      )
    ],
    run: (db, args) => getProduct(db, s(args, "product_id")) as PyValue
  },
  {
    name: "get_item_details",
    type: "read",
    description: "Get the inventory details of an item.",
    params: [
      str("item_id", "The item id, such as '6086499569'. Be careful the item id is different from the product id.")
    ],
    run: (db, args) => getItem(db, s(args, "item_id")) as PyValue
  },
  {
    name: "get_user_details",
    type: "read",
    description: "Get the details of a user, including their orders.",
    params: [str("user_id", USER_ID)],
    run: (db, args) => getUser(db, s(args, "user_id")) as PyValue
  },
  {
    name: "list_all_product_types",
    type: "read",
    description:
      "List the name and product id of all product types.\n\nEach product type has a variety of different items with unique item ids and options.\nThere are only 50 product types in the store.",
    params: [],
    run: (db) => {
      // a dict comprehension: a later product of the same name replaces the earlier one's id
      const byName = new Map<string, PyValue>()
      for (const product of db.products.values()) byName.set(product.name, product.product_id)
      return pyJsonDumps(byName, { sortKeys: true })
    }
  },
  {
    name: "modify_pending_order_address",
    type: "write",
    description: `Modify the shipping address of a pending order. ${CONFIRM}`,
    params: [str("order_id", ORDER_ID), ...addressParams],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (!isPendingOrder(order)) fail("Non-pending order cannot be modified")
      order.address = addressOf(args)
      return order as PyValue
    }
  },
  {
    name: "modify_pending_order_items",
    type: "write",
    description:
      "Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.",
    params: [
      str("order_id", ORDER_ID),
      strList(
        "item_ids",
        "The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list."
      ),
      strList(
        "new_item_ids",
        "The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product."
      ),
      str(
        "payment_method_id",
        "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details."
      )
    ],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (order.status !== "pending") fail("Non-pending order cannot be modified")
      const itemIds = list(args, "item_ids")
      const newItemIds = list(args, "new_item_ids")
      const allItemIds = order.items.map((item) => item.item_id)
      for (const itemId of itemIds) if (count(itemIds, itemId) > count(allItemIds, itemId)) fail(`${itemId} not found`)
      if (itemIds.length !== newItemIds.length) fail("The number of items to be exchanged should match")
      let diffPrice = 0
      let variant: Variant | undefined
      for (let k = 0; k < itemIds.length; k++) {
        const itemId = itemIds[k] as string
        const newItemId = newItemIds[k] as string
        if (itemId === newItemId) fail("The new item id should be different from the old item id")
        const item = order.items.find((x) => x.item_id === itemId) ?? fail(`Item ${itemId} not found`)
        variant = getVariant(db, item.product_id, newItemId)
        if (!variant.available) fail(`New item ${newItemId} not found or available`)
        diffPrice += variant.price - item.price
      }
      const paymentMethodId = s(args, "payment_method_id")
      const method = getPaymentMethodToWrite(db, order.user_id, paymentMethodId)
      if (isGiftCard(method) && method.balance < diffPrice)
        fail("Insufficient gift card balance to pay for the new item")
      order.payment_history.push(payment(diffPrice > 0 ? "payment" : "refund", Math.abs(diffPrice), paymentMethodId))
      if (isGiftCard(method)) {
        method.balance -= diffPrice
        method.balance = pyRound(method.balance, 2)
      }
      for (let k = 0; k < itemIds.length; k++) {
        const itemId = itemIds[k] as string
        const item = order.items.find((x) => x.item_id === itemId) ?? fail(`Item ${itemId} not found`)
        // τ² kept: every modified item takes the price and options of the first loop's last variant
        const last = variant as Variant
        item.item_id = newItemIds[k] as string
        item.price = last.price
        item.options = last.options
      }
      order.status = "pending (item modified)"
      return order as PyValue
    }
  },
  {
    name: "modify_pending_order_payment",
    type: "write",
    description: `Modify the payment method of a pending order. ${CONFIRM}`,
    params: [
      str("order_id", ORDER_ID),
      str(
        "payment_method_id",
        "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details."
      )
    ],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (!isPendingOrder(order)) fail("Non-pending order cannot be modified")
      const paymentMethodId = s(args, "payment_method_id")
      const method = getPaymentMethodToWrite(db, order.user_id, paymentMethodId)
      const paid = order.payment_history[0]
      if (order.payment_history.length !== 1 || paid?.transaction_type !== "payment")
        fail("There should be exactly one payment for a pending order")
      const original = paid as OrderPayment
      if (original.payment_method_id === paymentMethodId)
        fail("The new payment method should be different from the current one")
      const amount = original.amount
      if (isGiftCard(method) && method.balance < amount) fail("Insufficient gift card balance to pay for the order")
      order.payment_history.push(
        payment("payment", amount, paymentMethodId),
        payment("refund", amount, original.payment_method_id)
      )
      if (isGiftCard(method)) {
        method.balance -= amount
        method.balance = pyRound(method.balance, 2)
      }
      const oldMethod = getPaymentMethodToWrite(db, order.user_id, original.payment_method_id)
      if (isGiftCard(oldMethod)) {
        oldMethod.balance += amount
        oldMethod.balance = pyRound(oldMethod.balance, 2)
      }
      return order as PyValue
    }
  },
  {
    name: "modify_user_address",
    type: "write",
    description: `Modify the default address of a user. ${CONFIRM}`,
    params: [str("user_id", USER_ID), ...addressParams],
    run: (db, args) => {
      const user = getUserToWrite(db, s(args, "user_id"))
      user.address = addressOf(args)
      return user as PyValue
    }
  },
  {
    name: "return_delivered_order_items",
    type: "write",
    description:
      "Return some items of a delivered order.\n\nThe order status will be changed to 'return requested'.\nThe agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed.\nThe user will receive follow-up email for how and where to return the item.",
    params: [
      str("order_id", ORDER_ID),
      strList(
        "item_ids",
        "The item ids to be returned, each such as '1008292230'. There could be duplicate items in the list."
      ),
      str(
        "payment_method_id",
        "The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'.\nThese can be looked up from the user or order details."
      )
    ],
    run: (db, args) => {
      const order = getOrderToWrite(db, s(args, "order_id"))
      if (order.status !== "delivered") fail("Non-delivered order cannot be returned")
      const user = getUser(db, order.user_id)
      const paymentMethodId = s(args, "payment_method_id")
      const method = getPaymentMethod(db, user.user_id, paymentMethodId)
      if (!isGiftCard(method) && paymentMethodId !== first(order.payment_history).payment_method_id)
        fail("Payment method should be the original payment method")
      const itemIds = list(args, "item_ids")
      const allItemIds = order.items.map((item) => item.item_id)
      for (const itemId of itemIds) if (count(itemIds, itemId) > count(allItemIds, itemId)) fail("Some item not found")
      order.status = "return requested"
      order.return_items = sorted(itemIds)
      order.return_payment_method_id = paymentMethodId
      return order as PyValue
    }
  },
  transferToHumanAgentsTool()
]

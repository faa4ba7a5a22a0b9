// τ²-bench's airline tools (`tau2.domains.airline.tools.AirlineTools`), ported line for line: the same checks in the
// same order, the same error texts, the same writes (including τ²'s quirks, noted where they are kept).
import { z } from "zod"
import { type Tau2ParamSpec, Tau2ToolError, type Tau2ToolSpec } from "../domain.ts"
import { calculateTool, transferToHumanAgentsTool } from "../generic-tools.ts"
import { type PyValue, writableEntry } from "../python-json.ts"
import type {
  AirlineDb,
  CabinClass,
  Flight,
  FlightDateStatus,
  FlightDateStatusAvailable,
  Passenger,
  Payment,
  PaymentMethod,
  Reservation,
  ReservationFlight,
  User
} from "./data-model.ts"
import { CabinClass as CabinClassSchema, FlightType, Insurance } from "./data-model.ts"

const fail = (message: string): never => {
  throw new Tau2ToolError(message)
}

const getUser = (db: AirlineDb, userId: string): User => db.users.get(userId) ?? fail(`User ${userId} not found`)
const getReservation = (db: AirlineDb, id: string): Reservation =>
  db.reservations.get(id) ?? fail(`Reservation ${id} not found`)
// The same lookups for a tool that writes: the entry becomes this conversation's own copy first (see copyCollections)
const getUserToWrite = (db: AirlineDb, userId: string): User =>
  writableEntry(db.users, userId) ?? fail(`User ${userId} not found`)
const getReservationToWrite = (db: AirlineDb, id: string): Reservation =>
  writableEntry(db.reservations, id) ?? fail(`Reservation ${id} not found`)
const getFlight = (db: AirlineDb, flightNumber: string): Flight =>
  db.flights.get(flightNumber) ?? fail(`Flight ${flightNumber} not found`)
const getFlightInstance = (db: AirlineDb, flightNumber: string, date: string): FlightDateStatus =>
  getFlight(db, flightNumber).dates.get(date) ?? fail(`Flight ${flightNumber} not found on date ${date}`)
/** The flight date of a flight, in this conversation's own copy of the flight, to write its seats. */
const flightInstanceToWrite = (db: AirlineDb, flightNumber: string, date: string): FlightDateStatusAvailable =>
  (writableEntry(db.flights, flightNumber) as Flight).dates.get(date) as FlightDateStatusAvailable
const isAvailable = (status: FlightDateStatus): status is FlightDateStatusAvailable => status.status === "available"

const newReservationId = (db: AirlineDb): string => {
  for (const id of ["HATHAT", "HATHAU", "HATHAV"]) if (!db.reservations.has(id)) return id
  return fail("Too many reservations")
}
const NEW_PAYMENT_IDS = [3221322, 3221323, 3221324]
const NOW = "2024-05-15T15:00:00"

/** `DirectFlight` as τ² builds it from a flight date that is available (field order of the model). */
interface DirectFlight {
  flight_number: string
  origin: string
  destination: string
  status: "available"
  scheduled_departure_time_est: string
  scheduled_arrival_time_est: string
  date: string | null
  available_seats: ReadonlyMap<string, bigint>
  prices: ReadonlyMap<string, bigint>
}

const searchDirectFlight = (
  db: AirlineDb,
  date: string,
  origin: string | undefined,
  destination: string | undefined,
  leaveAfter?: string
): Array<DirectFlight> => {
  const results: Array<DirectFlight> = []
  for (const flight of db.flights.values()) {
    const instance = flight.dates.get(date)
    if (
      (origin === undefined || flight.origin === origin) &&
      (destination === undefined || flight.destination === destination) &&
      instance !== undefined &&
      isAvailable(instance) &&
      (leaveAfter === undefined || flight.scheduled_departure_time_est >= leaveAfter)
    )
      results.push({
        flight_number: flight.flight_number,
        origin: flight.origin,
        destination: flight.destination,
        status: "available",
        scheduled_departure_time_est: flight.scheduled_departure_time_est,
        scheduled_arrival_time_est: flight.scheduled_arrival_time_est,
        date: null,
        // pydantic validates the dicts into new ones
        available_seats: new Map(instance.available_seats),
        prices: new Map(instance.prices)
      })
  }
  return results
}

/** Python's `int(text)` for a date's last two characters: digits with an optional sign and surrounding spaces. */
const pyIntOf = (text: string): number => {
  if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(text))
    fail(`invalid literal for int() with base 10: '${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`)
  return Number.parseInt(text.replace(/_/g, "").trim(), 10)
}

/** τ²'s `_payment_for_update`: checks the method, takes the price off a gift card, a payment unless the price is 0. */
const paymentForUpdate = (user: User, paymentId: string, totalPrice: bigint): Payment | undefined => {
  const method: PaymentMethod = user.payment_methods.get(paymentId) ?? fail("Payment method not found")
  if (method.source === "certificate") fail("Certificate cannot be used to update reservation")
  else if (method.source === "gift_card" && method.amount < totalPrice) fail("Gift card balance is not enough")
  if (method.source === "gift_card") method.amount -= Number(totalPrice)
  return totalPrice !== 0n ? { payment_id: paymentId, amount: totalPrice } : undefined
}

// Arguments a model sends as objects: pydantic builds the model from each dict (unknown keys dropped)
const FlightInfoArg = z.object({ flight_number: z.string(), date: z.string() })
const PassengerArg = z.object({ first_name: z.string(), last_name: z.string(), dob: z.string() })
const PaymentArg = z.object({ payment_id: z.string(), amount: z.number().int() })

type Args = Record<string, unknown>
const s = (args: Args, name: string) => args[name] as string
const int = (args: Args, name: string) => BigInt(args[name] as number)
const flightInfos = (args: Args) => args["flights"] as Array<z.infer<typeof FlightInfoArg>>
const passengersOf = (args: Args): Array<Passenger> =>
  (args["passengers"] as Array<z.infer<typeof PassengerArg>>).map((p) => ({
    first_name: p.first_name,
    last_name: p.last_name,
    dob: p.dob
  }))

const param = (name: string, schema: z.ZodType, description: string): Tau2ParamSpec => ({ name, schema, description })
const str = (name: string, description: string): Tau2ParamSpec => param(name, z.string(), description)
const intParam = (name: string, description: string): Tau2ParamSpec => param(name, z.number().int(), description)

const PAYMENT_ID =
  "The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'."
const ORIGIN = "The origin city airport in three letters, such as 'JFK'."
const DESTINATION = "The destination city airport in three letters, such as 'LAX'."

const AIRPORTS: ReadonlyArray<readonly [string, string]> = [
  ["SFO", "San Francisco"],
  ["JFK", "New York"],
  ["LAX", "Los Angeles"],
  ["ORD", "Chicago"],
  ["DFW", "Dallas"],
  ["DEN", "Denver"],
  ["SEA", "Seattle"],
  ["ATL", "Atlanta"],
  ["MIA", "Miami"],
  ["BOS", "Boston"],
  ["PHX", "Phoenix"],
  ["IAH", "Houston"],
  ["LAS", "Las Vegas"],
  ["MCO", "Orlando"],
  ["EWR", "Newark"],
  ["CLT", "Charlotte"],
  ["MSP", "Minneapolis"],
  ["DTW", "Detroit"],
  ["PHL", "Philadelphia"],
  ["LGA", "LaGuardia"]
]

/** The airline tools in the order τ²'s toolkit lists them (by name). */
export const AIRLINE_TOOLS: ReadonlyArray<Tau2ToolSpec<AirlineDb>> = [
  {
    name: "book_reservation",
    type: "write",
    description: "Book a reservation.",
    params: [
      str("user_id", "The ID of the user to book the reservation such as 'sara_doe_496'`."),
      str("origin", "The IATA code for the origin city such as 'SFO'."),
      str("destination", "The IATA code for the destination city such as 'JFK'."),
      param("flight_type", FlightType, "The type of flight such as 'one_way' or 'round_trip'."),
      param("cabin", CabinClassSchema, "The cabin class such as 'basic_economy', 'economy', or 'business'."),
      param("flights", z.array(FlightInfoArg), "An array of objects containing details about each piece of flight."),
      param("passengers", z.array(PassengerArg), "An array of objects containing details about each passenger."),
      param(
        "payment_methods",
        z.array(PaymentArg),
        "An array of objects containing details about each payment method."
      ),
      intParam("total_baggages", "The total number of baggage items to book the reservation."),
      intParam("nonfree_baggages", "The number of non-free baggage items to book the reservation."),
      param("insurance", Insurance, "Whether the reservation has insurance.")
    ],
    run: (db, args) => {
      const passengers = passengersOf(args)
      const payments: Array<Payment> = (args["payment_methods"] as Array<z.infer<typeof PaymentArg>>).map((p) => ({
        payment_id: p.payment_id,
        amount: BigInt(p.amount)
      }))
      const userId = s(args, "user_id")
      const user = getUser(db, userId)
      const reservationId = newReservationId(db)
      const cabin = s(args, "cabin") as CabinClass
      const insurance = s(args, "insurance") as Reservation["insurance"]
      const nonfree = int(args, "nonfree_baggages")
      const reservation: Reservation = {
        reservation_id: reservationId,
        user_id: userId,
        origin: s(args, "origin"),
        destination: s(args, "destination"),
        flight_type: s(args, "flight_type") as Reservation["flight_type"],
        cabin,
        flights: [],
        passengers: passengers.map((p) => ({ ...p })),
        payment_history: payments.map((p) => ({ ...p })),
        created_at: NOW,
        total_baggages: int(args, "total_baggages"),
        nonfree_baggages: nonfree,
        insurance,
        status: null
      }
      const n = BigInt(passengers.length)
      let totalPrice = 0n
      const booked: Array<{ flightNumber: string; date: string }> = []
      for (const info of flightInfos(args)) {
        const flight = getFlight(db, info.flight_number)
        const instance = getFlightInstance(db, info.flight_number, info.date)
        if (!isAvailable(instance)) fail(`Flight ${info.flight_number} not available on date ${info.date}`)
        const available = instance as FlightDateStatusAvailable
        // a cabin missing from the flight's dict is Python's KeyError, whose text is the key's repr
        const seats = available.available_seats.get(cabin) ?? fail(`'${cabin}'`)
        if (seats < n) fail(`Not enough seats on flight ${info.flight_number}`)
        const price = available.prices.get(cabin) ?? fail(`'${cabin}'`)
        reservation.flights.push({
          flight_number: info.flight_number,
          origin: flight.origin,
          destination: flight.destination,
          date: info.date,
          price
        })
        booked.push({ flightNumber: info.flight_number, date: info.date })
        totalPrice += price * n
      }
      if (insurance === "yes") totalPrice += 30n * n
      totalPrice += 50n * nonfree
      for (const p of payments) {
        const method = user.payment_methods.get(p.payment_id) ?? fail(`Payment method ${p.payment_id} not found`)
        if ((method.source === "gift_card" || method.source === "certificate") && method.amount < p.amount)
          fail(`Not enough balance in payment method ${p.payment_id}`)
      }
      const totalPayment = payments.reduce((sum, p) => sum + p.amount, 0n)
      if (totalPayment !== totalPrice)
        fail(`Payment amount does not add up, total price is ${totalPrice}, but paid ${totalPayment}`)
      // the checks passed: take the payments, then the seats
      const writable = getUserToWrite(db, userId)
      for (const p of payments) {
        const method = writable.payment_methods.get(p.payment_id) as PaymentMethod
        if (method.source === "gift_card") method.amount -= Number(p.amount)
        else if (method.source === "certificate") writable.payment_methods.delete(p.payment_id)
      }
      for (const b of booked) {
        const instance = flightInstanceToWrite(db, b.flightNumber, b.date)
        const seats = instance.available_seats
        ;(seats as Map<string, bigint>).set(cabin, (seats.get(cabin) as bigint) - n)
      }
      db.reservations.set(reservationId, reservation)
      writable.reservations.push(reservationId)
      return reservation as unknown as PyValue
    }
  },
  calculateTool(),
  {
    name: "cancel_reservation",
    type: "write",
    description: "Cancel the whole reservation.",
    params: [str("reservation_id", "The reservation ID, such as 'ZFA04Y'.")],
    run: (db, args) => {
      const reservation = getReservationToWrite(db, s(args, "reservation_id"))
      const refunds = reservation.payment_history.map((p) => ({ payment_id: p.payment_id, amount: -p.amount }))
      reservation.payment_history.push(...refunds)
      reservation.status = "cancelled"
      // τ² does not release the seats of a cancelled reservation
      return reservation as unknown as PyValue
    }
  },
  {
    name: "get_flight_status",
    type: "read",
    description: "Get the status of a flight.",
    params: [str("flight_number", "The flight number."), str("date", "The date of the flight.")],
    run: (db, args) => getFlightInstance(db, s(args, "flight_number"), s(args, "date")).status
  },
  {
    name: "get_reservation_details",
    type: "read",
    description: "Get the details of a reservation.",
    params: [str("reservation_id", "The reservation ID, such as '8JX2WO'.")],
    run: (db, args) => getReservation(db, s(args, "reservation_id")) as unknown as PyValue
  },
  {
    name: "get_user_details",
    type: "read",
    description: "Get the details of a user, including their reservations.",
    params: [str("user_id", "The user ID, such as 'sara_doe_496'.")],
    run: (db, args) => getUser(db, s(args, "user_id")) as unknown as PyValue
  },
  {
    name: "list_all_airports",
    type: "read",
    description: "Returns a list of all available airports.",
    params: [],
    run: () => AIRPORTS.map(([iata, city]) => ({ iata, city }))
  },
  {
    name: "search_direct_flight",
    type: "read",
    description: "Search for direct flights between two cities on a specific date.",
    params: [
      str("origin", ORIGIN),
      str("destination", DESTINATION),
      str("date", "The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.")
    ],
    run: (db, args) =>
      searchDirectFlight(db, s(args, "date"), s(args, "origin"), s(args, "destination")) as unknown as PyValue
  },
  {
    name: "search_onestop_flight",
    type: "read",
    description: "Search for one-stop flights between two cities on a specific date.",
    params: [
      str("origin", ORIGIN),
      str("destination", DESTINATION),
      str("date", "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")
    ],
    run: (db, args) => {
      const date = s(args, "date")
      const results: Array<[DirectFlight, DirectFlight]> = []
      for (const first of searchDirectFlight(db, date, s(args, "origin"), undefined)) {
        first.date = date
        // τ²'s next day: May only, the day not zero-padded (`2024-05-{int(date[-2:]) + 1}`)
        const date2 = first.scheduled_arrival_time_est.includes("+1") ? `2024-05-${pyIntOf(date.slice(-2)) + 1}` : date
        for (const second of searchDirectFlight(
          db,
          date2,
          first.destination,
          s(args, "destination"),
          first.scheduled_arrival_time_est
        )) {
          second.date = date2
          results.push([first, second])
        }
      }
      return results as unknown as PyValue
    }
  },
  {
    name: "send_certificate",
    type: "write",
    description: "Send a certificate to a user. Be careful!",
    params: [
      str("user_id", "The ID of the user to book the reservation, such as 'sara_doe_496'."),
      intParam("amount", "The amount of the certificate to send.")
    ],
    run: (db, args) => {
      const userId = s(args, "user_id")
      const amount = args["amount"] as number
      const user = getUser(db, userId)
      for (const paymentId of NEW_PAYMENT_IDS.map((id) => `certificate_${id}`))
        if (!user.payment_methods.has(paymentId)) {
          // a certificate's amount is a float: the int sent is dumped as `100.0`
          getUserToWrite(db, userId).payment_methods.set(paymentId, { source: "certificate", id: paymentId, amount })
          return `Certificate ${paymentId} added to user ${userId} with amount ${amount}.`
        }
      return fail("Too many certificates")
    }
  },
  transferToHumanAgentsTool(),
  {
    name: "update_reservation_baggages",
    type: "write",
    description: "Update the baggage information of a reservation.",
    params: [
      str("reservation_id", "The reservation ID, such as 'ZFA04Y'"),
      intParam("total_baggages", "The updated total number of baggage items included in the reservation."),
      intParam("nonfree_baggages", "The updated number of non-free baggage items included in the reservation."),
      str("payment_id", PAYMENT_ID)
    ],
    run: (db, args) => {
      const reservation = getReservationToWrite(db, s(args, "reservation_id"))
      const user = getUserToWrite(db, reservation.user_id)
      const nonfree = int(args, "nonfree_baggages")
      const more = nonfree - reservation.nonfree_baggages
      const payment = paymentForUpdate(user, s(args, "payment_id"), 50n * (more > 0n ? more : 0n))
      if (payment !== undefined) reservation.payment_history.push(payment)
      reservation.total_baggages = int(args, "total_baggages")
      reservation.nonfree_baggages = nonfree
      return reservation as unknown as PyValue
    }
  },
  {
    name: "update_reservation_flights",
    type: "write",
    description: "Update the flight information of a reservation.",
    params: [
      str("reservation_id", "The reservation ID, such as 'ZFA04Y'."),
      param("cabin", CabinClassSchema, "The cabin class of the reservation"),
      param(
        "flights",
        z.array(FlightInfoArg),
        "An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array."
      ),
      str("payment_id", PAYMENT_ID)
    ],
    run: (db, args) => {
      const reservation = getReservationToWrite(db, s(args, "reservation_id"))
      const user = getUserToWrite(db, reservation.user_id)
      const cabin = s(args, "cabin") as CabinClass
      const n = BigInt(reservation.passengers.length)
      let totalPrice = 0n
      const flights: Array<ReservationFlight> = []
      for (const info of flightInfos(args)) {
        // a flight already booked in the same cabin keeps its price
        const kept = reservation.flights.find(
          (f) => f.flight_number === info.flight_number && f.date === info.date && cabin === reservation.cabin
        )
        if (kept !== undefined) {
          totalPrice += kept.price * n
          flights.push(kept)
          continue
        }
        const flight = getFlight(db, info.flight_number)
        const instance = getFlightInstance(db, info.flight_number, info.date)
        if (!isAvailable(instance)) fail(`Flight ${info.flight_number} not available on date ${info.date}`)
        const available = instance as FlightDateStatusAvailable
        const seats = available.available_seats.get(cabin) ?? fail(`'${cabin}'`)
        if (seats < n) fail(`Not enough seats on flight ${info.flight_number}`)
        const added: ReservationFlight = {
          flight_number: info.flight_number,
          origin: flight.origin,
          destination: flight.destination,
          date: info.date,
          price: available.prices.get(cabin) ?? fail(`'${cabin}'`)
        }
        totalPrice += added.price * n
        flights.push(added)
      }
      totalPrice -= reservation.flights.reduce((sum, f) => sum + f.price, 0n) * n
      // a cheaper itinerary is a negative payment, credited to a gift card as τ² does
      const payment = paymentForUpdate(user, s(args, "payment_id"), totalPrice)
      if (payment !== undefined) reservation.payment_history.push(payment)
      reservation.flights = flights
      reservation.cabin = cabin
      // τ² does not update the flights' seats here
      return reservation as unknown as PyValue
    }
  },
  {
    name: "update_reservation_passengers",
    type: "write",
    description: "Update the passenger information of a reservation.",
    params: [
      str("reservation_id", "The reservation ID, such as 'ZFA04Y'."),
      param("passengers", z.array(PassengerArg), "An array of objects containing details about each passenger.")
    ],
    run: (db, args) => {
      const passengers = passengersOf(args)
      const id = s(args, "reservation_id")
      getReservation(db, id)
      if (passengers.length !== getReservation(db, id).passengers.length) fail("Number of passengers does not match")
      getReservationToWrite(db, id).passengers = passengers
      return getReservation(db, id) as unknown as PyValue
    }
  }
]

// The airline database in zod, field for field as τ²'s `tau2.domains.airline.data_model` (the order is the dump's;
// an `int` field is a bigint, a `float` field a number, as `parsePyJson` reads them and pydantic dumps them).
import { z } from "zod"
import { pyDict, pyFloat, pyModel, pyOptional } from "../py-model.ts"

/** An `int` field: a JSON int (a bigint here); a float with no fraction becomes an int, as pydantic's lax mode does. */
export const pyInt = () =>
  z.preprocess((v) => (typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v), z.bigint())

export const FlightType = z.enum(["round_trip", "one_way"])
export const CabinClass = z.enum(["business", "economy", "basic_economy"])
export type CabinClass = z.infer<typeof CabinClass>
export const Insurance = z.enum(["yes", "no"])

export const Name = pyModel({ first_name: z.string(), last_name: z.string() })

export const Address = pyModel({
  address1: z.string(),
  address2: pyOptional(z.string()),
  city: z.string(),
  country: z.string(),
  state: z.string(),
  zip: z.string()
})

export const Payment = pyModel({ payment_id: z.string(), amount: pyInt() })
export type Payment = z.infer<typeof Payment>

export const CreditCard = pyModel({
  source: z.literal("credit_card"),
  id: z.string(),
  brand: z.string(),
  last_four: z.string()
})
// GiftCard redeclares `id` after `amount` in τ², but pydantic keeps an inherited field in the parent's place
export const GiftCard = pyModel({ source: z.literal("gift_card"), id: z.string(), amount: pyFloat() })
export const Certificate = pyModel({ source: z.literal("certificate"), id: z.string(), amount: pyFloat() })
export const PaymentMethod = z.union([CreditCard, GiftCard, Certificate])
export type PaymentMethod = z.infer<typeof PaymentMethod>

export const Passenger = pyModel({ first_name: z.string(), last_name: z.string(), dob: z.string() })
export type Passenger = z.infer<typeof Passenger>

const cabinDict = pyDict(pyInt())

export const FlightDateStatusAvailable = pyModel({
  status: z.literal("available"),
  available_seats: cabinDict,
  prices: cabinDict
})
export type FlightDateStatusAvailable = z.infer<typeof FlightDateStatusAvailable>
export const FlightDateStatusLanded = pyModel({
  status: z.literal("landed"),
  actual_departure_time_est: z.string(),
  actual_arrival_time_est: z.string()
})
export const FlightDateStatusCancelled = pyModel({ status: z.literal("cancelled") })
export const FlightDateStatusDelayed = pyModel({
  status: z.literal("delayed"),
  estimated_departure_time_est: z.string(),
  estimated_arrival_time_est: z.string()
})
export const FlightDataStatusFlying = pyModel({
  status: z.literal("flying"),
  actual_departure_time_est: z.string(),
  estimated_arrival_time_est: z.string()
})
export const FlightDataStatusOnTime = pyModel({
  status: z.literal("on time"),
  estimated_departure_time_est: z.string(),
  estimated_arrival_time_est: z.string()
})
export const FlightDateStatus = z.union([
  FlightDateStatusAvailable,
  FlightDateStatusLanded,
  FlightDateStatusCancelled,
  FlightDateStatusDelayed,
  FlightDataStatusFlying,
  FlightDataStatusOnTime
])
export type FlightDateStatus = z.infer<typeof FlightDateStatus>

export const Flight = pyModel({
  flight_number: z.string(),
  origin: z.string(),
  destination: z.string(),
  scheduled_departure_time_est: z.string(),
  scheduled_arrival_time_est: z.string(),
  dates: pyDict(FlightDateStatus)
})
export type Flight = z.infer<typeof Flight>

export const ReservationFlight = pyModel({
  flight_number: z.string(),
  origin: z.string(),
  destination: z.string(),
  date: z.string(),
  price: pyInt()
})
export type ReservationFlight = z.infer<typeof ReservationFlight>

export const User = pyModel({
  user_id: z.string(),
  name: Name,
  address: Address,
  email: z.string(),
  dob: z.string(),
  payment_methods: pyDict(PaymentMethod),
  saved_passengers: z.array(Passenger),
  membership: z.enum(["gold", "silver", "regular"]),
  reservations: z.array(z.string())
})
export type User = z.infer<typeof User>

export const Reservation = pyModel({
  reservation_id: z.string(),
  user_id: z.string(),
  origin: z.string(),
  destination: z.string(),
  flight_type: FlightType,
  cabin: CabinClass,
  flights: z.array(ReservationFlight),
  passengers: z.array(Passenger),
  payment_history: z.array(Payment),
  created_at: z.string(),
  total_baggages: pyInt(),
  nonfree_baggages: pyInt(),
  insurance: Insurance,
  status: pyOptional(z.literal("cancelled"))
})
export type Reservation = z.infer<typeof Reservation>

/** `FlightDB`: flights, users and reservations, each indexed by id; no other top-level field (`extra="forbid"`). */
export const AirlineDb = pyModel(
  { flights: pyDict(Flight), users: pyDict(User), reservations: pyDict(Reservation) },
  { strict: true }
)
export type AirlineDb = z.infer<typeof AirlineDb>

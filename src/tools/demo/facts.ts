// The offline facts table behind the demo `lookup_fact` tool: a few capitals, populations, heights and constants.

export interface Fact {
  readonly subject: string
  readonly attribute: string
  readonly value: string | number
  readonly unit?: string
  /** Where the figure comes from, so that answers can say how exact it is. */
  readonly source: string
}

const CENSUS = "national census"
const SURVEY = "commonly cited survey height"

/** A small, fixed table; figures are as published by the named source and do not change between runs. */
export const FACTS: ReadonlyArray<Fact> = [
  { subject: "France", attribute: "capital", value: "Paris", source: "constitution" },
  { subject: "Germany", attribute: "capital", value: "Berlin", source: "constitution" },
  { subject: "Italy", attribute: "capital", value: "Rome", source: "constitution" },
  { subject: "Spain", attribute: "capital", value: "Madrid", source: "constitution" },
  { subject: "United Kingdom", attribute: "capital", value: "London", source: "government" },
  { subject: "United States", attribute: "capital", value: "Washington, D.C.", source: "government" },
  { subject: "Canada", attribute: "capital", value: "Ottawa", source: "government" },
  { subject: "Mexico", attribute: "capital", value: "Mexico City", source: "constitution" },
  { subject: "Brazil", attribute: "capital", value: "Brasília", source: "constitution" },
  { subject: "Argentina", attribute: "capital", value: "Buenos Aires", source: "constitution" },
  { subject: "Japan", attribute: "capital", value: "Tokyo", source: "government" },
  { subject: "China", attribute: "capital", value: "Beijing", source: "constitution" },
  { subject: "India", attribute: "capital", value: "New Delhi", source: "government" },
  { subject: "Australia", attribute: "capital", value: "Canberra", source: "government" },
  { subject: "Egypt", attribute: "capital", value: "Cairo", source: "constitution" },
  { subject: "Kenya", attribute: "capital", value: "Nairobi", source: "constitution" },
  { subject: "Nigeria", attribute: "capital", value: "Abuja", source: "constitution" },
  { subject: "Russia", attribute: "capital", value: "Moscow", source: "constitution" },
  { subject: "Turkey", attribute: "capital", value: "Ankara", source: "constitution" },
  { subject: "United States", attribute: "population", value: 331_449_281, source: `${CENSUS} 2020` },
  { subject: "Japan", attribute: "population", value: 126_146_099, source: `${CENSUS} 2020` },
  { subject: "Canada", attribute: "population", value: 36_991_981, source: `${CENSUS} 2021` },
  { subject: "Australia", attribute: "population", value: 25_422_788, source: `${CENSUS} 2021` },
  { subject: "China", attribute: "population", value: 1_411_778_724, source: `${CENSUS} 2020` },
  { subject: "India", attribute: "population", value: 1_210_854_977, source: `${CENSUS} 2011` },
  { subject: "Mount Everest", attribute: "height", value: 8849, unit: "m", source: "China-Nepal survey 2020" },
  { subject: "K2", attribute: "height", value: 8611, unit: "m", source: SURVEY },
  { subject: "Kangchenjunga", attribute: "height", value: 8586, unit: "m", source: SURVEY },
  { subject: "Aconcagua", attribute: "height", value: 6961, unit: "m", source: SURVEY },
  { subject: "Denali", attribute: "height", value: 6190, unit: "m", source: "USGS survey 2015" },
  { subject: "Kilimanjaro", attribute: "height", value: 5895, unit: "m", source: SURVEY },
  { subject: "Mount Elbrus", attribute: "height", value: 5642, unit: "m", source: SURVEY },
  {
    subject: "Mont Blanc",
    attribute: "height",
    value: 4806,
    unit: "m",
    source: "varies with the ice cap; rounded survey height"
  },
  { subject: "Matterhorn", attribute: "height", value: 4478, unit: "m", source: SURVEY },
  { subject: "Mount Fuji", attribute: "height", value: 3776, unit: "m", source: SURVEY },
  { subject: "Mount Kosciuszko", attribute: "height", value: 2228, unit: "m", source: SURVEY },
  { subject: "speed of light", attribute: "value", value: 299_792_458, unit: "m/s", source: "SI definition" },
  { subject: "Earth", attribute: "mean radius", value: 6371, unit: "km", source: "IUGG mean radius" },
  {
    subject: "Moon",
    attribute: "mean distance from Earth",
    value: 384_400,
    unit: "km",
    source: "NASA fact sheet (semi-major axis)"
  },
  { subject: "water", attribute: "boiling point at sea level", value: 100, unit: "°C", source: "at 1 atm" }
]

const fold = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/^the\s+/, "")
    .replace(/^mt\.?\s+/, "mount ")

/** Facts about a subject (and attribute, when given); matching ignores case and a leading "the". */
export const lookupFacts = (subject: string, attribute?: string): ReadonlyArray<Fact> => {
  const s = fold(subject)
  const bySubject = FACTS.filter((f) => fold(f.subject) === s || fold(f.subject) === `mount ${s}`)
  if (attribute === undefined || attribute.trim() === "") return bySubject
  const a = fold(attribute)
  return bySubject.filter((f) => fold(f.attribute) === a || fold(f.attribute).startsWith(a))
}

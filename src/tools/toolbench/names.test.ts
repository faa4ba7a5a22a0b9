import { describe, expect, it } from "vitest"
import {
  changeName,
  functionName,
  standardizeCategory,
  standardizeName,
  standardizeParameterName,
  stdApiName
} from "./names.ts"

describe("StableToolBench name rules", () => {
  it("standardizes like StableToolBench's standardize()", () => {
    expect(standardizeName("Kick.com API | Kick API")).toBe("kick_com_api_kick_api")
    expect(standardizeName("Get Chat User (like user from chat)")).toBe("get_chat_user_like_user_from_chat")
    expect(standardizeName("__Keyword  Analysis__")).toBe("keyword_analysis")
    expect(standardizeName("PopularSitesForQuery")).toBe("popularsitesforquery")
    expect(standardizeName("4D Results")).toBe("get_4d_results")
    expect(standardizeName("📊 Order Management System API")).toBe("order_management_system_api")
    expect(standardizeName("Números a Letras")).toBe("n_meros_a_letras")
    expect(standardizeName("天气 API")).toBe("天气_api")
    expect(standardizeName("---")).toBe("")
  })

  it("prefixes reserved names with is_", () => {
    expect(changeName("from")).toBe("is_from")
    expect(changeName("id")).toBe("is_id")
    expect(changeName("ids")).toBe("ids")
    expect(standardizeParameterName("ID")).toBe("is_id")
    expect(standardizeParameterName("Return")).toBe("is_return")
    expect(stdApiName({ api_name: "Class" })).toBe("is_class")
  })

  it("names a function <api>_for_<tool>, keeping the last 64 characters", () => {
    expect(functionName({ tool_name: "Keyword Analysis", api_name: "PopularSitesForQuery" })).toBe(
      "popularsitesforquery_for_keyword_analysis"
    )
    const long = functionName({
      tool_name: "A Very Long Tool Name That Goes On And On",
      api_name: "Get The Most Detailed Statistics Available"
    })
    const full = "get_the_most_detailed_statistics_available_for_a_very_long_tool_name_that_goes_on_and_on"
    expect(long).toHaveLength(64)
    expect(long).toBe(full.slice(-64))
    expect(full.endsWith(long)).toBe(true)
  })

  it("standardizes categories like the server's cache folders", () => {
    expect(standardizeCategory("Video, Images")).toBe("Video_Images")
    expect(standardizeCategory("News, Media")).toBe("News_Media")
    expect(standardizeCategory("Health and Fitness")).toBe("Health_and_Fitness")
  })
})

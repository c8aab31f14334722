import { expect, it } from "vitest";
import * as api from "./index.js";

it("exports exactly the documented surface", () => {
  expect(Object.keys(api).sort()).toEqual([
    "DEFAULT_ANTHROPIC_MAX_TOKENS", "DriverError", "FOLD_TARGET", "FOLD_TRIGGER", "MAX_CELL_SOURCE_BYTES", "PRICE_KEYS", "PYTHON_TOOL", "RESERVED_OPTIONS", "RequestAssembler",
    "anthropicMessages", "assembleMessages", "bodyDigest", "bodyMessages", "buildRequestBody", "callRoute", "cellImages", "cellsOf", "chatMessages",
    "composeFrontierBlock", "estimateTokens", "findRoute", "isDriverError", "needsBudgetFold", "parseRoute", "parseRoutes", "planBudgetFold", "planBudgetFoldAsync", "prefixView",
    "renderCellResult", "renderFrontier", "renderRecord", "renderRefusal", "renderRevision", "renderTurnEnd", "responsesInput", "routeKey", "serializeBody",
    "serializeMessages", "sharedPrefixBytes",
  ]);
});

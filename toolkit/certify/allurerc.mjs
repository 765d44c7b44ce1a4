// Allure 3 report of `gatekit certify`: one self-contained HTML file, grouped flow > operation > scenario.
// gatekit's failure categories come from the run (allure-results/categories.json); the history of earlier
// runs is kept in reports/history.jsonl for the trends: keep that file between runs (a CI cache) to see them.
// `gatekit certify` sets GATEKIT_ALLURE_RESULTS and GATEKIT_REPORTS when --results or --reports move them.
import { existsSync, readFileSync } from "node:fs";

const results = process.env.GATEKIT_ALLURE_RESULTS ?? "allure-results";
const reports = process.env.GATEKIT_REPORTS ?? "reports";
const categories = `${results}/categories.json`;

export default {
  name: "gatekit certification",
  output: `${reports}/allure-report`,
  historyPath: `${reports}/history.jsonl`,
  historyLimit: 30, // runs kept for the trends
  categories: existsSync(categories) ? JSON.parse(readFileSync(categories, "utf8")) : [],
  plugins: {
    awesome: {
      options: {
        reportName: "gatekit certification",
        singleFile: true,
        groupBy: ["epic", "feature"],
      },
    },
  },
};

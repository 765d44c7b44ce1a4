// Allure 3 report of `gatekit certify`: one self-contained HTML file, grouped flow > operation > scenario
// (`gatekit certify` then takes out the Google Analytics Allure writes into it: toolkit/certify/offline.py).
// gatekit's failure categories come from the run (allure-results/categories.json); the history of earlier
// runs is kept in reports/history.jsonl for the trends (one file per suite selection: history.*.jsonl for
// --suite-only, --tags or your own folder beside gatekit's): keep those files between runs (a CI cache).
// `gatekit certify` sets GATEKIT_ALLURE_RESULTS, GATEKIT_REPORTS and GATEKIT_HISTORY.
import { existsSync, readFileSync } from "node:fs";

const results = process.env.GATEKIT_ALLURE_RESULTS ?? "allure-results";
const reports = process.env.GATEKIT_REPORTS ?? "reports";
const categories = `${results}/categories.json`;

export default {
  name: "gatekit certification",
  output: `${reports}/allure-report`,
  historyPath: process.env.GATEKIT_HISTORY ?? `${reports}/history.jsonl`,
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

// Allure 3 report of the certification suite: one self-contained HTML file, grouped flow > operation > scenario.
import { defineConfig } from "allure";

export default defineConfig({
  name: "gatekit certification",
  output: "reports/allure-report",
  plugins: {
    awesome: {
      options: {
        reportName: "gatekit certification",
        singleFile: true,
        groupBy: ["epic", "feature", "story"],
      },
    },
  },
});

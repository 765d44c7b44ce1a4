// The Allure 3 report of `make certify` is gatekit's own (categories, history and trends): see the file it names.
export { default } from "./toolkit/certify/allurerc.mjs";

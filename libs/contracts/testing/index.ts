// @rx/contracts/testing: worst-case-sized payloads for the size and schema tests and the fuzzers.
export * from './payload-fixtures';

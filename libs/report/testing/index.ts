// @rx/report/testing: a synthetic run directory for the report's and the CLI's tests and the browser render check.
export * from './synthetic-run.fixture';

// @rx/cli: the CLI's deliberate public entry, for tools/ only (the fuzzers run each command in process). Apps and libs
// cannot import an app (@nx/enforce-module-boundaries); eslint.config.js allows this entry in tools/ and nowhere else.
export { run as advantagesCommand } from './commands/advantages.command';
export { run as dataCommand } from './commands/data.command';
export { run as decideCommand } from './commands/decide.command';
export { run as gradeCommand } from './commands/grade.command';
export { run as reportCommand } from './commands/report.command';
export { run as validateCommand } from './commands/validate.command';
export { UserError } from './user-error';

// @rx/exchange-record/testing: an intact record with its files, for the validators' tests here and the controller's.
export { intactRecord, expectedRun as intactExpectedRun, type IntactRecord } from './intact-record.fixture';

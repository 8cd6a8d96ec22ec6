/** The public face of test clocks (DESIGN §24): the routes and the advance flow use these. */
export {
  createTestClock,
  deleteTestClock,
  failTestClockAdvance,
  finishTestClockAdvance,
  getTestClock,
  listTestClocks,
  recordTestClockTime,
  startTestClockAdvance,
  testClockTime,
  toTestClock,
  MAX_ADVANCE_MS,
} from './test-clocks.service.js';
export type { TestClockRow } from './test-clocks.repository.js';
export { advanceTestClockBody, createTestClockBody, deletedTestClockSchema, testClockSchema, type TestClock } from './test-clocks.schemas.js';

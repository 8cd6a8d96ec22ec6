/** The public face of GST returns (DESIGN §15): GSTR-1 and GSTR-3B of an entity's month. */
export { buildGstr1, getGstr1, getGstr1Csv, getGstr3b } from './gst-returns.service.js';
export { b2clLimitPaise, rupees as gstRupees } from './gstr1.js';
export { csvResponse, gstr1aQuery, gstr1aSchema, gstr1Schema, gstr3bSchema, returnQuery } from './gst-returns.schemas.js';
export { getGstr1a, getGstr3bCsv } from './gst-returns.service.js';
export { validateGstr1 } from './gstr1-schema.js';

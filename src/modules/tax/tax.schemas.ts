import { z } from 'zod';
import { describeGstinProblem, gstinProblem } from './gstin.js';
import { isGstStateCode } from './states.js';

/** A GSTIN field: upper-cased, format and check digit verified. */
export const gstinField = () =>
  z
    .string()
    .trim()
    .max(15)
    .transform((v) => v.toUpperCase())
    .superRefine((v, ctx) => {
      const problem = gstinProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: `GSTIN ${describeGstinProblem(problem)}` });
    });

/** A two-digit GST state code such as "29" (Karnataka). */
export const stateCodeField = () => z.string().trim().refine(isGstStateCode, 'must be a two-digit GST state code such as "29"');

/** SAC for services (6 digits beginning 99) or an HSN code (4, 6 or 8 digits). */
export const sacCodeField = () => z.string().regex(/^(\d{4}|\d{6}|\d{8})$/, 'must be a 4, 6 or 8 digit HSN/SAC code');

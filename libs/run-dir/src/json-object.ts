// The object schema every run-file schema is built from: the fields named are checked; any other field a file holds
// is not refused (a field added later). The reader returns a file's JSON as written, never zod's output, so such a
// field is read back whole and the run record that embeds what it reads drops nothing.
import { z } from 'zod';

export const jsonObject = <T extends z.ZodRawShape>(shape: T) => z.object(shape);

export const isoTime = z.string().datetime();

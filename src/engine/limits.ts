/** Engine-wide limits shared by analysis and strategies. */

/** A ForEach may contain a ForEach, which may not contain another. */
export const MAX_FOREACH_DEPTH = 2;

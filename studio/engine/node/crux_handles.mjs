// The objects the `@use-crux/core` stand-in made, kept apart from its exports so that a hook
// cannot reach this set: the studio reads them as the baseline's own contributors.
export const made = new WeakSet();

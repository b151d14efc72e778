// Module resolve hook: adds the '@tsmpi/source' condition to every resolve, so
// that '@tsmpi/core/pmi' and '@tsmpi/core' resolve to their TypeScript sources
// (see the exports maps in packages/*/package.json).
const CONDITION = '@tsmpi/source';

export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes(CONDITION) ? context.conditions : [...context.conditions, CONDITION];
  return nextResolve(specifier, { ...context, conditions });
}

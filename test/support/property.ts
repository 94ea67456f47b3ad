import fc from 'fast-check';

/**
 * How randomised tests run (as test/api/integrity.property.test.ts): a fixed seed, then a
 * random one printed in the test name; `PROPERTY_SEED=<n>` replays a failure.
 */
export const randomSeed = process.env['PROPERTY_SEED'] ? Number(process.env['PROPERTY_SEED']) : Date.now() % 2 ** 31;

export function checkProperty<T>(label: string, arb: fc.Arbitrary<T>, check: (value: T) => void, seed: number, numRuns: number): void {
  try {
    fc.assert(fc.property(arb, check), { seed, numRuns, endOnFailure: true });
  } catch (err) {
    // fast-check's report names the seed and the path too; this line is for a CI log skim.
    console.error(`${label}: property failed with seed ${seed} (replay: PROPERTY_SEED=${seed})`);
    throw err;
  }
}

export async function checkAsyncProperty<T>(label: string, arb: fc.Arbitrary<T>, check: (value: T) => Promise<void>, seed: number, numRuns: number): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arb, check), { seed, numRuns, endOnFailure: true });
  } catch (err) {
    console.error(`${label}: property failed with seed ${seed} (replay: PROPERTY_SEED=${seed})`);
    throw err;
  }
}

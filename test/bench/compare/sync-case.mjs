// The `sync-1000` case (cases.mjs) and its profile (profile-sync.mjs): a source of 1,000
// objects of two attributes, 1,000 records in one of them, then sixteen pushes that each add one
// attribute to that object and change the type of another (six at first: a ~30 ms push on this
// shared machine spread 25–46 ms, and six samples let one slow neighbour move the median). Awaits every store call, so the
// same code drives the old synchronous store and the new asynchronous one.
const actor = { keyId: 'bench', role: 'owner', scopes: null };

/** The pushes' times (ms) on a fresh store at `path`; the hooks run right before and after them. */
export async function syncThousand(openStore, path, { beforePushes, afterPushes } = {}) {
  const store = openStore({ path, filesDir: false });
  try {
    const objects = {};
    for (let i = 0; i < 1000; i++) objects[`o${i}`] = { attributes: { title: { type: 'text' }, n: { type: 'integer' } } };
    const decl = { objects, views: {} };
    await store.pushSource('bench', decl, {});
    await store.bulkCreate('o7', Array.from({ length: 1000 }, (_, i) => ({ title: `t${i}`, n: i })), actor);
    await beforePushes?.();
    const times = [];
    for (let r = 0; r < 16; r++) {
      const next = structuredClone(decl);
      next.objects.o7.attributes[`extra${r}`] = { type: 'text' };
      next.objects.o7.attributes.n = { type: r % 2 === 0 ? 'number' : 'integer' };
      const t = performance.now();
      await store.pushSource('bench', next, { allowDestructive: true });
      times.push(performance.now() - t);
      decl.objects = next.objects;
    }
    await afterPushes?.();
    return times;
  } finally {
    await store.close();
  }
}

import { startTestServer, type TestServer } from './helpers.js';

/**
 * The server the files race and refusal tests share: object `deal` with a text `name`, a
 * multiple document attribute `atts` and a single one `one`, and the two record calls
 * every test of theirs makes.
 */
export async function startDealServer(): Promise<TestServer> {
  const srv = await startTestServer();
  await srv.defineObject('deal', [
    { name: 'name', type: 'text' },
    { name: 'atts', type: 'document', multiple: true },
    { name: 'one', type: 'document' },
  ]);
  return srv;
}

export function dealCalls(srv: () => TestServer) {
  return {
    deal: async (name: string) => (await srv().call('POST', '/records/deal', { body: { name } })).body.data as { id: string },
    read: async (id: string) => (await srv().call('GET', `/records/deal/${id}`)).body.data as { version: number; values: Record<string, unknown> },
  };
}

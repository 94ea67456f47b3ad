/**
 * Whether a base URL names this machine: `localhost`, any 127.x.x.x, `[::1]`, or `0.0.0.0`
 * (which a client reaches as this machine). One rule for what the CLI treats as a local
 * instance: which targets watch and dev may push to by default (contract.md §7 "loopback
 * URLs"), and which hints talk about the local server (its rate limits, starting it).
 */
export function isLoopbackUrl(url: string | undefined): boolean {
  if (url === undefined) return false;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || host === '0.0.0.0' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

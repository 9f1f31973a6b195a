/**
 * robots.txt, read once per origin the crawl visits (rules apply to one scheme, host and port) and
 * parsed by robots-parser, which picks the group for our product token (`ToolportBot`) and falls back
 * to `*`. What an unreadable file means follows common practice (and RFC 9309 for 4xx):
 * - 2xx: its rules apply (the first 512 KiB are read, as Google does; the rest is ignored);
 * - 4xx: there are no rules, everything is allowed;
 * - 5xx, a timeout or a failed connection: everything is allowed, and the answer is noted so the record
 *   shows the crawl went ahead without rules;
 * - an address the outbound guard refuses: noted as well; the page requests that follow are refused by
 *   the guard in the same way, and for the start page the crawl reports that refusal.
 * Redirects of robots.txt itself are followed within the site (at most 5, as for pages).
 */
import robotsParserModule from "robots-parser";
import { FetchFailure, type SiteFetcher } from "./fetch.js";

/** The product token our robots.txt group is named by (robots-parser drops the version and lower-cases). */
export const ROBOTS_AGENT = "ToolportBot";

const MAX_ROBOTS_BYTES = 512 * 1024;

/**
 * The package is CommonJS (`module.exports = function`) with types written as an ES default export:
 * under NodeNext, TypeScript types the default import as the module object, while Node hands over the
 * function itself.
 */
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;
type Rules = ReturnType<typeof robotsParser>;

export interface RobotsOutcome {
  /** The parsed file, or undefined when everything is allowed (no usable file). */
  rules: Rules | undefined;
  /** Why the crawl runs without rules, when that is worth recording (5xx, failures). */
  note?: string;
  /** The failure that kept the file from being read, if one did. */
  failure?: FetchFailure;
}

export class RobotsTxt {
  private readonly byOrigin = new Map<string, Promise<RobotsOutcome>>();

  constructor(
    private readonly fetcher: SiteFetcher,
    /** Called once per origin whose robots.txt could not be read for a reason worth noting. */
    private readonly onNote: (robotsUrl: string, note: string) => void,
  ) {}

  /** The robots.txt verdict for `url`, reading its origin's file first if this is the first visit. */
  async allows(url: URL): Promise<boolean> {
    const { rules } = await this.load(url);
    return rules?.isAllowed(url.href, ROBOTS_AGENT) !== false;
  }

  /** Reads (once) the robots.txt of `url`'s origin. */
  load(url: URL): Promise<RobotsOutcome> {
    let outcome = this.byOrigin.get(url.origin);
    if (!outcome) {
      outcome = this.read(new URL("/robots.txt", url.origin));
      this.byOrigin.set(url.origin, outcome);
    }
    return outcome;
  }

  private async read(robotsUrl: URL): Promise<RobotsOutcome> {
    try {
      const res = await this.fetcher.get(robotsUrl, {
        accept: "text/plain,*/*;q=0.5",
        want: (status) => status >= 200 && status < 300,
        maxBytes: MAX_ROBOTS_BYTES,
        overflow: "truncate",
        checkRobots: false,
      });
      if (res.read) return { rules: robotsParser(robotsUrl.href, res.body.toString("utf8")) };
      if (res.status >= 500)
        return this.noted(robotsUrl, `robots.txt answered HTTP ${res.status}; crawled as if it allowed everything`);
      return { rules: undefined };
    } catch (err) {
      if (!(err instanceof FetchFailure)) throw err;
      return {
        ...this.noted(robotsUrl, `robots.txt could not be read (${err.message}); crawled as if it allowed everything`),
        failure: err,
      };
    }
  }

  private noted(robotsUrl: URL, note: string): RobotsOutcome {
    this.onNote(robotsUrl.href, note);
    return { rules: undefined, note };
  }
}

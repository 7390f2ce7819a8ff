/**
 * The GitHub cases' common set-up, in one place: the GitHub double with Overseer's bot and a
 * person (alice), the case's repository with `main` protected (the `ci` check required), the
 * cluster (bwrap) with its coordinator and worker, and the runner configuration that lands
 * through pull requests on that repository.
 */
import type { CoordinatorOptions } from "@overseer/coordinator";
import { GitHubDouble, type GitHubDoubleUser } from "@overseer/test-support";
import { afterAll, beforeAll } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";

/** The repository's files at first: a README and the `v` the fake agents bump. */
export const APP_FILES: Readonly<Record<string, string>> = {
  "README.md": "# app\n",
  "src/app.ts": "export const v = 0;\n",
};

export interface GitHubCaseOptions {
  repo: string;
  /** Names the case's tokens: `ghp_overseer_<tag>` for the bot, `ghp_alice_<tag>` for the person. */
  tag: string;
  /**
   * The coordinator's id and its options (`forgeRetryBaseMs: 20` and, as the double sets no
   * limit, `githubWriteIntervalMs: 0` unless given).
   */
  coordinator: string;
  coordinatorOptions?: CoordinatorOptions;
  /** The worker's concurrency. */
  workers: number;
  /** Runs once the cluster is set up and before its coordinator starts (a gateway, say). */
  beforeCoordinator?: () => Promise<void>;
}

/** A GitHub case's double, people and cluster; `useGitHubCase` starts and stops them. */
export class GitHubCase {
  readonly cluster = new ClusterFixture({ sandbox: "bwrap" });
  readonly bot: GitHubDoubleUser;
  readonly human: GitHubDoubleUser;
  private double: GitHubDouble | undefined;

  constructor(readonly options: GitHubCaseOptions) {
    this.bot = { login: "overseer-bot", token: `ghp_overseer_${options.tag}` };
    this.human = { login: "alice", token: `ghp_alice_${options.tag}` };
  }

  /** The double; there once `start` has run (in the suite's beforeAll). */
  get forge(): GitHubDouble {
    if (!this.double) throw new Error("the GitHub double is not started: use it inside the suite's tests");
    return this.double;
  }

  /**
   * Starts the double (the bot and the person, the repository with APP_FILES, `main` protected
   * with `ci` required), sets the cluster up and starts its coordinator and one worker.
   */
  async start(): Promise<void> {
    const { repo, coordinator, coordinatorOptions, workers } = this.options;
    this.double = await GitHubDouble.start();
    this.double.addUser(this.bot);
    this.double.addUser(this.human);
    await this.double.createRepository(repo, { ...APP_FILES });
    await this.double.protectBranch(repo, ["main"], ["ci"]);
    await this.cluster.setup();
    await this.options.beforeCoordinator?.();
    await this.cluster.startCoordinator(coordinator, {
      forgeRetryBaseMs: 20,
      githubWriteIntervalMs: 0,
      ...coordinatorOptions,
    });
    await this.cluster.startWorker(workers);
  }

  /** Tears the cluster down, then closes the double (if it started). */
  async stop(): Promise<void> {
    await this.cluster.teardown();
    await this.double?.close();
  }

  /**
   * The fake harness's runner configuration landing through pull requests on the repository as
   * the bot: polled every second, `ci` required, and `pullRequest` on top (merge mode, labels,
   * approvals); `extra` adds to the configuration (attempts, say).
   */
  pullRequestConfig(
    pullRequest: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> {
    return ClusterFixture.fakeRunnerConfig({
      ...extra,
      landing: {
        mode: "pull_request",
        pull_request: { poll_seconds: 1, required_checks: ["ci"], ...pullRequest },
      },
      forge: { kind: "github", url: this.forge.url, repository: this.options.repo, token: this.bot.token },
    });
  }
}

/**
 * A GitHub case for this suite: started in its beforeAll (120 s, the double and the cluster),
 * stopped in its afterAll. afterAll hooks the suite registers later run before this one's.
 */
export function useGitHubCase(options: GitHubCaseOptions): GitHubCase {
  const gh = new GitHubCase(options);
  beforeAll(() => gh.start(), 120_000);
  afterAll(() => gh.stop());
  return gh;
}

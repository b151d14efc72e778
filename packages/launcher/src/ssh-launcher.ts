/**
 * The rank launcher for other hosts through ssh (or --launcher-exec): one
 * proxy per host (proxy-launcher.ts), each started by its own ssh, as
 * Hydra's ssh launcher does. At most MAX_CONCURRENT_LAUNCHES ssh connections
 * are in progress at once (sshd's MaxStartups, the head's cores); the next
 * starts when one proxy linked or failed. The launch spec, with the job key,
 * goes on ssh's stdin, never on a command line. A host that is not up yet
 * (a pod still starting) is tried again for --connect-retry seconds, holding
 * its launch slot meanwhile (connect-retry.ts).
 */
import { ConnectRetry } from './connect-retry.ts';
import { remoteLaunchArgv, remoteShellCommand, shellQuote } from './remote-command.ts';
import type { HostLaunchLine, WireupAddress } from './rank-launcher.ts';
import type { RemoteHost } from './remote-host.ts';
import { PROXY_BIN, ProxyLauncher } from './proxy-launcher.ts';

/** Remote launches (ssh connections) in progress at once; the next starts when one proxy linked or failed. */
const MAX_CONCURRENT_LAUNCHES = 8;

export class SshLauncher extends ProxyLauncher {
  #launchQueue: (() => void)[] = [];
  #launching = 0;
  #isStopped = false;

  start(wireup: WireupAddress): void {
    for (const h of this.hosts) {
      this.#launchQueue.push(() => {
        if (this.#isStopped || h.isDone) {
          this.#launchNext();
          return;
        }
        const { file, args } = this.#sshCommand(h);
        this.deps.log.debug({ host: h.host, file, args }, 'starting a proxy');
        this.#launching++;
        const retry = new ConnectRetry((this.deps.options.connectRetrySec ?? 0) * 1000);
        h.start(file, args, JSON.stringify(this.launchSpec(h, wireup.port, wireup.addresses)), () => {
          this.#launching--;
          this.#launchNext();
        }, retry);
      });
    }
    this.#launchNext();
  }

  override abandonUnstarted(): readonly number[] {
    this.#isStopped = true;
    this.#launchQueue = [];
    return super.abandonUnstarted();
  }

  plan(): HostLaunchLine[] {
    return this.hosts.map((h) => {
      const { file, args } = this.#sshCommand(h);
      return { host: h.host, ranks: h.ranks, command: `proxy: ${[file, ...args].map(shellQuote).join(' ')}  (launch spec and job key on its stdin)` };
    });
  }

  /** The command that starts host `h`'s proxy. */
  #sshCommand(h: RemoteHost): { file: string; args: string[] } {
    return remoteLaunchArgv(this.deps.options.launcherExec, h.host, remoteShellCommand(this.remoteWdir(), this.remoteNode(), [PROXY_BIN]));
  }

  #launchNext(): void {
    while (this.#launching < MAX_CONCURRENT_LAUNCHES && this.#launchQueue.length > 0) this.#launchQueue.shift()!();
  }
}

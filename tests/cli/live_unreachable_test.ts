/**
 * The live commands against a cluster nobody serves: one `error:` line naming the cluster (the
 * kubeconfig's current context when no `--context` is given) and what was being read, exit 2 —
 * before anything else.
 */
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles } from "./_fixtures.ts";

const SERVER = "https://127.0.0.1:1";
/** A CA nobody signs with: the kubeconfig must carry one (Deno's client always verifies). */
const CA = Deno.readTextFileSync(new URL("fixtures/unreachable-ca.pem", import.meta.url));

async function deadKubeconfig(): Promise<string> {
  const dir = await tempFiles({
    "kubeconfig": [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: dead, cluster: {server: '" + SERVER + "', certificate-authority-data: " +
      btoa(CA) + "}}]",
      "users: [{name: u, user: {token: t}}]",
      "contexts: [{name: dead, context: {cluster: dead, user: u}}]",
      "current-context: dead",
      "",
    ].join("\n"),
  });
  return `${dir}/kubeconfig`;
}

Deno.test("live commands: an unreachable cluster is one line naming it, exit 2", async () => {
  const kubeconfig = await deadKubeconfig();
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "--live", "--kubeconfig", kubeconfig),
    new RegExp(
      `^error: cluster dead: reading CRDConversionConfig \\S+: unreachable: [^\\n]+\\n$`,
    ),
  );
  assertToolError(
    await convctl("crossplane", "status", "x.example.com", "--kubeconfig", kubeconfig),
    /^error: cluster dead: reading XRD x.example.com: unreachable: [^\n]+\n$/,
  );
  assertToolError(
    await convctl(
      "retarget",
      "-x",
      "x.example.com",
      "--to",
      "v2",
      "--context",
      "dead",
      "--kubeconfig",
      kubeconfig,
    ),
    /^error: cluster dead: reading XRD x.example.com: unreachable: [^\n]+\n$/,
  );
});

Deno.test("test --verify-propagation: only with --live, only for an XRD", async () => {
  const { config, crd } = FIELD_RENAME;
  assertToolError(
    await convctl("test", "-c", config, "--crd", crd, "--fuzz", "1", "--verify-propagation"),
    "--verify-propagation requires --live",
  );
  assertToolError(
    await convctl(
      "test",
      "-c",
      config,
      "--crd",
      crd,
      "--live",
      "--verify-propagation",
      "--kubeconfig",
      await deadKubeconfig(),
    ),
    "--verify-propagation is for XRD targets (-x): a CRD target is its own generated CRD",
  );
});

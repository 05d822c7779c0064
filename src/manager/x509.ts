/** `@peculiar/x509` on WebCrypto, loaded after its `reflect-metadata` polyfill (import it from here). */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(globalThis.crypto);

export { x509 };

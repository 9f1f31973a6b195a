// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function KeyUsage({ keyId }: { keyId: string }) {
  return <Page title="KeyUsage">{null}</Page>;
}

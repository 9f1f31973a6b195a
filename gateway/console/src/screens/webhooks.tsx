// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Webhooks() {
  return <Page title="Webhooks">{null}</Page>;
}

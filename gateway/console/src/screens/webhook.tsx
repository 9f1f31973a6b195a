// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function WebhookPage({ webhookId }: { webhookId: string }) {
  return <Page title="WebhookPage">{null}</Page>;
}

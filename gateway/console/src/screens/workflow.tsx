// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function WorkflowPage({ workflowId }: { workflowId: string }) {
  return <Page title="WorkflowPage">{null}</Page>;
}

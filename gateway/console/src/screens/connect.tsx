// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Connect({ serviceId }: { serviceId: string }) {
  return <Page title="Connect">{null}</Page>;
}

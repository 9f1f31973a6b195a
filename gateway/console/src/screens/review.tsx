// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Review() {
  return <Page title="Review">{null}</Page>;
}

// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Wallet() {
  return <Page title="Wallet">{null}</Page>;
}

import { Component, type ReactNode } from "react";
import { ErrorNote } from "./index";

/** A screen that throws while rendering shows the error instead of a blank page. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    return this.state.error ? <ErrorNote error={this.state.error} /> : this.props.children;
  }
}

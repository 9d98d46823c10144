import React, { useState } from "react";

type ButtonProps = {
  label: string;
  onClick?: () => void;
};

/** A button that counts its clicks. */
export function CounterButton({ label, onClick }: ButtonProps) {
  const [count, setCount] = useState(0);
  const handle = () => {
    setCount(count + 1);
    onClick?.();
  };
  return (
    <button className="counter" onClick={handle}>
      {label}: {count} — “clicks”
    </button>
  );
}

export const Badge = ({ text }: { text: string }) => <span>{text}</span>;

interface PanelState {
  open: boolean;
}

export class Panel extends React.Component<{}, PanelState> {
  state: PanelState = { open: false };

  // Toggle visibility.
  toggle = () => {
    this.setState({ open: !this.state.open });
  };

  render() {
    return (
      <div>
        <CounterButton label="Zähler" />
        {this.state.open && <Badge text="open" />}
      </div>
    );
  }
}

export default function App() {
  return <Panel />;
}

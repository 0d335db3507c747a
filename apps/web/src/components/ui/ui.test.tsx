import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { Field, Input, Switch, Tooltip } from '.';
import { Label } from './label';

describe('form primitives', () => {
  it('a label can carry a required marker and a tooltip that opens on focus and closes on Escape', async () => {
    const user = userEvent.setup();
    render(
      <>
        <Label htmlFor="title" required tooltip="Keep it under 50 characters.">
          Title
        </Label>
        <input id="title" required />
      </>,
    );

    expect(screen.getByText('*')).toHaveAttribute('aria-hidden', 'true');
    expect(screen.getByRole('textbox', { name: 'Title' })).toBeRequired();
    const trigger = screen.getByRole('button', { name: 'About Title' });
    expect(trigger).toHaveAccessibleDescription('Keep it under 50 characters.');
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();

    await user.tab();
    expect(trigger).toHaveFocus();
    expect(screen.getByRole('tooltip')).toHaveTextContent('Keep it under 50 characters.');
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();
  });

  it('a tooltip opened near the left edge of a narrow window is moved inside it, and starts centred again next time', async () => {
    const user = userEvent.setup();
    render(<Tooltip content="Keep it short." label="About Title" />);
    // jsdom has no layout: the bubble reports the box it would have, 40 px past the left edge of a 375 px window.
    vi.spyOn(document.documentElement, 'clientWidth', 'get').mockReturnValue(375);
    const rect = vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue(DOMRect.fromRect({ x: -40, y: 0, width: 256, height: 40 }));
    await user.click(screen.getByRole('button', { name: 'About Title' }));
    expect(screen.getByRole('tooltip')).toHaveStyle({ marginLeft: '48px' });
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();

    rect.mockReturnValue(DOMRect.fromRect({ x: 300, y: 0, width: 256, height: 40 }));
    await user.keyboard('{Enter}');
    expect(screen.getByRole('tooltip')).toHaveStyle({ marginLeft: '-189px' });
  });

  it('a tap on a phone opens a tooltip (focus and click come together) and a second tap closes it; a mouse click keeps it open', async () => {
    const user = userEvent.setup();
    render(<Tooltip content="Keep it short." label="About Title" />);
    const trigger = screen.getByRole('button', { name: 'About Title' });
    await user.pointer({ keys: '[TouchA]', target: trigger });
    expect(screen.getByRole('tooltip')).toHaveTextContent('Keep it short.');
    await user.pointer({ keys: '[TouchA]', target: trigger });
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();

    await user.click(trigger);
    expect(screen.getByRole('tooltip')).toBeInTheDocument();
    await user.click(trigger);
    expect(screen.getByRole('tooltip')).toBeInTheDocument();
  });

  it('a switch can carry a tooltip next to its label', () => {
    render(<Switch label="Large Image" tooltip="1200×628 pixels." checked={false} onCheckedChange={() => undefined} />);
    expect(screen.getByRole('switch', { name: 'Large Image' })).not.toBeChecked();
    expect(screen.getByRole('button', { name: 'About Large Image' })).toHaveAccessibleDescription('1200×628 pixels.');
  });

  it('a field ties its control to the label, hint and error', () => {
    render(
      <Field label="Website URL" required hint="Use https://" error="Website URL is required">
        {(control) => <Input {...control} type="url" />}
      </Field>,
    );

    const input = screen.getByRole('textbox', { name: /Website URL/ });
    expect(input).toBeRequired();
    expect(input).toBeInvalid();
    expect(input).toHaveAccessibleDescription('Use https:// Website URL is required');
  });
});

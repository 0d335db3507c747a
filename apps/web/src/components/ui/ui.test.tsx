import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { Field, Input, Label } from '.';

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

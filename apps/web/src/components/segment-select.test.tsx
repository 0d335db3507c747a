import { QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { queryClient } from '../lib/query-client';
import { reachText } from '../lib/audience';
import { segmentOptionLabel } from '../lib/segment-options';
import { deferred, fail, mockApi, ok } from '../test/fetch-mock';
import { signIn } from '../test/fixtures';
import { SegmentSelectField } from './segment-select';

const SEGMENTS = 'GET /api/sites/site-1/segments';

const segment = (id: string, name: string, estimated_count: number) => ({
  id,
  site_id: 'site-1',
  name,
  rules: {},
  estimated_count,
  created_at: '2026-03-01T00:00:00.000Z',
  updated_at: '2026-03-01T00:00:00.000Z',
});

function Harness({ siteId, initial = '' }: { siteId: string | undefined; initial?: string }) {
  const [value, setValue] = useState(initial);
  return (
    <QueryClientProvider client={queryClient}>
      <SegmentSelectField siteId={siteId} value={value} onChange={setValue} hint="Who receives it." />
      <output data-testid="value">{value}</output>
    </QueryClientProvider>
  );
}

const optionTexts = () => [...(screen.getByRole('combobox', { name: 'Target Segment' }) as HTMLSelectElement).options].map((o) => o.textContent);

describe('segment target select (shared by the notification, campaign and feed forms)', () => {
  it('offers All Subscribers and each segment with its estimated count, and reports the chosen id', async () => {
    signIn();
    const api = mockApi({ [SEGMENTS]: ok({ segments: [segment('seg-1', 'VIP buyers', 1200), segment('seg-2', 'Night owls', 1), segment('seg-3', 'Nobody yet', 0)] }) });
    const user = userEvent.setup();
    render(<Harness siteId="site-1" />);

    await waitFor(() =>
      expect(optionTexts()).toEqual(['All Subscribers', 'VIP buyers (1,200)', 'Night owls (1)', 'Nobody yet (0)']),
    );
    expect(screen.getByRole('combobox', { name: 'Target Segment' })).toHaveAccessibleDescription('Who receives it.');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Target Segment' }), 'Night owls (1)');
    expect(screen.getByTestId('value')).toHaveTextContent('seg-2');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Target Segment' }), 'All Subscribers');
    expect(screen.getByTestId('value')).toBeEmptyDOMElement();
    expect(api.callsTo(SEGMENTS)[0]?.headers.get('authorization')).toBe('Bearer session-token');
  });

  it('keeps a saved segment selected while the list loads, and names it "Deleted segment" if it is gone', async () => {
    signIn();
    const answer = deferred();
    mockApi({ [SEGMENTS]: () => answer.promise });
    render(<Harness siteId="site-1" initial="seg-gone" />);

    const select = screen.getByRole('combobox', { name: 'Target Segment' });
    expect(select).toHaveValue('seg-gone');
    expect(optionTexts()).toEqual(['All Subscribers', 'Loading segments...']);

    answer.resolve(ok({ segments: [segment('seg-1', 'VIP buyers', 3)] }));
    await waitFor(() => expect(optionTexts()).toEqual(['All Subscribers', 'VIP buyers (3)', 'Deleted segment']));
    // Still the saved one: saving the form again must not widen the audience to everyone.
    expect(select).toHaveValue('seg-gone');
  });

  it('shows a saved segment once the list arrives', async () => {
    signIn();
    mockApi({ [SEGMENTS]: ok({ segments: [segment('seg-1', 'VIP buyers', 3), segment('seg-2', 'Night owls', 5)] }) });
    render(<Harness siteId="site-1" initial="seg-2" />);
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Target Segment' })).toHaveDisplayValue('Night owls (5)'));
  });

  it("says when the list could not be loaded (the server's message), instead of the hint", async () => {
    signIn();
    mockApi({ [SEGMENTS]: fail(404, 'Site not found') });
    render(<Harness siteId="site-1" />);
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Target Segment' })).toHaveAccessibleDescription('Segments could not be loaded: Site not found.'), {
      timeout: 5000,
    });
    expect(optionTexts()).toEqual(['All Subscribers']);
  });

  it('asks nothing without a site', async () => {
    signIn();
    const api = mockApi({});
    render(<Harness siteId={undefined} />);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.calls).toHaveLength(0);
    expect(optionTexts()).toEqual(['All Subscribers']);
  });

  it('labels an option with the count in words', () => {
    expect(segmentOptionLabel({ id: 's', name: 'Big list', estimated_count: 1234567, is_estimate: false })).toBe('Big list (1,234,567)');
  });

  it('marks a count estimated from a sample (docs/product.md, "Segments")', () => {
    expect(segmentOptionLabel({ id: 's', name: 'Chrome', estimated_count: 512000, is_estimate: true })).toBe('Chrome (≈ 512,000)');
    expect(reachText({ count: 512000, sample_size: 11702 })).toBe('Will reach about 512,000 subscribers (estimated from a sample of 11,702)');
    expect(reachText({ count: 1, sample_size: null })).toBe('Will reach 1 subscriber');
  });
});

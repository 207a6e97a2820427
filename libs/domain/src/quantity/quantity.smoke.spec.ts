import { describe, expect, it } from 'vitest';
import { Quantity } from './quantity.js';
describe('smoke', () => {
  it.each([
    ['1.5Gi', '1536Mi'], ['1500m', '1500m'], ['1.5', '1500m'], ['2000', '2k'], ['100m', '100m'], ['0.1m', '100u'],
    ['1Ki', '1Ki'], ['1024', '1024'], ['0.5Ki', '512'], ['1e3', '1e3'], ['1E', '1E'], ['+1', '+1'], ['-2048Ki', '-2Mi'], ['.', '0'], ['0.0000000001', '1n'],
  ])('%s → %s', (i, o) => expect(Quantity.parse(i).toString()).toBe(o));
});

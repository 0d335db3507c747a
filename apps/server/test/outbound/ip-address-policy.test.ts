import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../src/platform/ip-address-policy';

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::127.0.0.1', 'loopback'], // IPv4-compatible
    ['::7f00:1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'], // IPv4-translated
    ['64:ff9b::7f00:1', 'loopback'], // NAT64
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b:1::1', 'private'], // local-use NAT64
    ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001::1', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['example.com', 'invalid'],
    ['2130706433', 'invalid'], // numeric forms are the URL parser's job, never DNS answers
    ['', 'invalid'],
  ])('%s is %s', (address, block) => {
    expect(classifyAddress(address)).toBe(block);
    expect(classifyAddress(address)).not.toBeNull();
  });

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '169.253.1.1', '223.255.255.255', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBeNull();
      expect(classifyAddress(address)).toBeNull();
    },
  );
});

module.exports = async function redisGlobalTeardown() {
  const child = globalThis.__RX_TEST_REDIS__;
  if (child) child.kill('SIGTERM');
};

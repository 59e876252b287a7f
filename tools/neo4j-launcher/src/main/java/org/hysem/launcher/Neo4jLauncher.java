package org.hysem.launcher;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Neo4j 5 Community, embedded, reachable over Bolt on 127.0.0.1 only.
 *
 * <p>Usage: {@code java -jar neo4j-launcher.jar --port 7687 --data DIR [--password SECRET]}.
 * Without a password, authentication is off (a loopback test server). Prints one line
 * starting with {@code NEO4J READY} once the database answers, and shuts down cleanly on
 * SIGTERM or SIGINT, so the store is never left needing recovery.
 */
public final class Neo4jLauncher {

    private Neo4jLauncher() {}

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> options = parse(args);
        int port = Integer.parseInt(options.getOrDefault("port", "7687"));
        Path data = Path.of(options.getOrDefault("data", "neo4j-data")).toAbsolutePath();
        String password = options.getOrDefault("password", System.getenv("NEO4J_LAUNCHER_PASSWORD"));

        DatabaseManagementService service = new DatabaseManagementServiceBuilder(data)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, password != null && !password.isEmpty())
                .setConfig(GraphDatabaseSettings.pagecache_memory,
                        ByteUnit.mebiBytes(Long.parseLong(options.getOrDefault("pagecache-mb", "128"))))
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                // Bolt's network threads otherwise idle 2 x 5 s before exiting on SIGTERM.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            service.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));

        GraphDatabaseService db = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (password != null && !password.isEmpty()) {
            GraphDatabaseService system = service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        }
        db.executeTransactionally("RETURN 1");
        System.out.println("NEO4J READY bolt://127.0.0.1:" + port + " data=" + data);
        System.out.flush();
        stopped.await();
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("usage: --port N --data DIR [--password SECRET] [--pagecache-mb N]");
                System.exit(2);
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }
}

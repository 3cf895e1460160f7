/*
 * streaming_dq: a Delta LogStore for S3 (through S3A) whose commits are conditional writes.
 *
 * A Delta commit is the creation of the table's next log file, and it must fail when another writer created
 * that file first. Delta's S3SingleDriverLogStore only guards against writers in its own JVM, and the
 * DynamoDB LogStore needs a DynamoDB table. S3 (and the stores that copy its API) now refuse a PUT with
 * "If-None-Match: *" on an existing key; S3A (Hadoop 3.4.2 and later) sends it for a file created with the option
 * fs.option.create.conditional.overwrite. delta-rs commits the same way (aws_conditional_put), so Spark's
 * writer and delta-rs can commit to one table, from any number of processes.
 *
 * Built by `python -m streaming_dq.runtime.jvm fetch s3` (javac, against delta-storage and Hadoop's client
 * API) into the s3 bundle; chosen with spark.delta.logStore.s3a.impl (streaming_dq sets it).
 */
package io.streamingdq.delta;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

import io.delta.storage.HadoopFileSystemLogStore;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

public class S3ConditionalLogStore extends HadoopFileSystemLogStore {

    /** The S3A create option that turns a PUT into "create only if absent" (If-None-Match: *). */
    static final String CREATE_IF_ABSENT = "fs.option.create.conditional.overwrite";

    public S3ConditionalLogStore(Configuration initHadoopConf) {
        super(initHadoopConf);
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
            throws IOException {
        // The whole file first: S3A uploads on close(), so a failure while producing the lines must not
        // leave a stream whose close would publish half a commit.
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        while (actions.hasNext()) {
            content.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        FileSystem fs = path.getFileSystem(hadoopConf);
        if (overwrite) { // _last_checkpoint and the like: last writer wins, as in every LogStore
            try (FSDataOutputStream out = fs.create(path, true)) {
                content.writeTo(out);
            }
            return;
        }
        // overwrite(true): no HEAD first (a check another writer could race anyway); the store's refusal of
        // the conditional PUT is the one guard, and it is atomic
        FSDataOutputStreamBuilder<?, ?> builder = fs.createFile(path).overwrite(true);
        builder.must(CREATE_IF_ABSENT, true);
        try (FSDataOutputStream out = builder.build()) {
            content.writeTo(out);
        } catch (IOException e) {
            if (takenByAnother(e)) {
                java.nio.file.FileAlreadyExistsException taken =
                    new java.nio.file.FileAlreadyExistsException(path.toString());
                taken.initCause(e);
                throw taken; // Delta's signal: another writer took this version, check and retry
            }
            throw e;
        }
    }

    /** Whether the create failed because the file exists: the store refused the conditional PUT (412). */
    static boolean takenByAnother(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof org.apache.hadoop.fs.FileAlreadyExistsException
                    || t instanceof java.nio.file.FileAlreadyExistsException) {
                return true;
            }
            String name = t.getClass().getSimpleName();
            String message = String.valueOf(t.getMessage());
            if (name.equals("RemoteFileChangedException")
                    || message.contains("PreconditionFailed")
                    || message.contains("Status Code: 412")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
        return false; // an S3 PUT is all or nothing
    }
}

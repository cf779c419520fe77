// swift-tools-version:6.0
// The differ against DifferenceKit on the same workloads in the same run: `make bench-dk
// DK=<a checkout of https://github.com/ra1028/DifferenceKit>`. The Makefile links the
// checkout and this repository into .build/bench-dk (so both have fixed package names);
// DifferenceKit's code is never part of this repository.
import PackageDescription

let package = Package(
    name: "bench-dk",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../../.build/bench-dk/BatchDiff"),
        .package(path: "../../.build/bench-dk/DifferenceKit"),
    ],
    targets: [
        .executableTarget(
            name: "bench-dk",
            dependencies: [
                .product(name: "BatchDiff", package: "BatchDiff"),
                .product(name: "BatchDiffJSON", package: "BatchDiff"),
                .product(name: "DifferenceKit", package: "DifferenceKit"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
